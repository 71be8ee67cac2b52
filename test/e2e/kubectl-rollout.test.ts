/**
 * kubectl's rollout commands against the daemon running the deployment and
 * replicaset controllers: `rollout status` finishes, `set image` rolls to a
 * second revision, `rollout history` lists both and `rollout undo` goes
 * back. The test plays the kubelet, marking each pod Running and Ready.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'

let d: Daemon
let kubeletStopped = false

/** Marks every pod that is not Ready yet Running and Ready, as a kubelet would report it, until the test ends. */
async function playKubelet(): Promise<void> {
  while (!kubeletStopped) {
    const listed = await d.kubectl('get', 'pods', '-o', 'jsonpath={range .items[?(@.status.phase=="Pending")]}{.metadata.name}{"\\n"}{end}')
    for (const name of listed.stdout.split('\n').filter(Boolean)) {
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
      const status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] }
      await d.kubectl('patch', 'pod', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status }))
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

before(async () => {
  d = await Daemon.start(['--controllers=deployment,replicaset'])
  void playKubelet()
})

after(async () => {
  kubeletStopped = true
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

describe('kubectl rollout', () => {
  it('finishes rollout status, rolls to a new image and back with undo', async () => {
    assert.equal(await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=3'), 'deployment.apps/web created\n')
    assert.match(await ok('rollout', 'status', 'deployment/web', '--timeout=60s'), /deployment "web" successfully rolled out\n$/)
    assert.equal(await ok('get', 'deployment', 'web', '-o', 'jsonpath={.status.readyReplicas}/{.status.replicas}'), '3/3')

    assert.equal(await ok('set', 'image', 'deployment/web', 'nginx=nginx:1.28'), 'deployment.apps/web image updated\n')
    assert.match(await ok('rollout', 'status', 'deployment/web', '--timeout=60s'), /deployment "web" successfully rolled out\n$/)
    const history = await ok('rollout', 'history', 'deployment/web')
    assert.match(history, /^1\s/m)
    assert.match(history, /^2\s/m)

    assert.equal(await ok('rollout', 'undo', 'deployment/web'), 'deployment.apps/web rolled back\n')
    assert.match(await ok('rollout', 'status', 'deployment/web', '--timeout=60s'), /deployment "web" successfully rolled out\n$/)
    assert.equal(
      await ok('get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.spec.containers[0].image} {.metadata.annotations.deployment\\.kubernetes\\.io/revision}'),
      'nginx:1.27 3',
    )
    const sets = await ok('get', 'replicasets', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.spec.replicas}{" "}{end}')
    assert.deepEqual(sets.trim().split(' ').map(Number).sort(), [0, 3])
  })
})
