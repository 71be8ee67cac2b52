/**
 * kubectl against the daemon's status, scale and resize subresources:
 * `kubectl scale`, `get --subresource`, `patch --subresource=status` keeping
 * what the resource's status strategy keeps, and `patch --subresource=resize`
 * changing a pod's cpu and memory alone.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

describe('kubectl and subresources', () => {
  it('scales a deployment and reads the replicas back', async () => {
    assert.equal(await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=1'), 'deployment.apps/web created\n')
    assert.equal(await ok('scale', 'deployment', 'web', '--replicas=3'), 'deployment.apps/web scaled\n')
    assert.equal(await ok('get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}'), '3 2')
    assert.equal(await ok('get', 'deployment', 'web', '--subresource=scale', '-o', 'jsonpath={.kind} {.spec.replicas} {.status.selector}'), 'Scale 3 app=web')
  })

  it('refuses a scale whose current replicas do not match', async () => {
    const r = await d.kubectl('scale', 'deployment', 'web', '--current-replicas=5', '--replicas=2')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /Expected replicas to be 5, was 3/)
  })

  it('reads a deployment through its status subresource', async () => {
    assert.equal(await ok('get', 'deployment', 'web', '--subresource=status', '-o', 'jsonpath={.metadata.name} {.spec.replicas}'), 'web 3')
  })

  it('patches an ingress status with an annotation and keeps both, as the Ingress conformance spec does', async () => {
    assert.equal(await ok('create', 'ingress', 'front', '--rule=example.com/=web:80'), 'ingress.networking.k8s.io/front created\n')
    const patch = '{"metadata":{"annotations":{"patchedstatus":"true"}},"spec":{"ingressClassName":"other"},"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}}'
    await ok('patch', 'ingress', 'front', '--subresource=status', '--type=merge', '-p', patch)
    const read = await ok('get', 'ingress', 'front', '-o', 'jsonpath={.metadata.annotations.patchedstatus} {.status.loadBalancer.ingress[0].ip} {.spec.ingressClassName}')
    assert.equal(read.trim(), 'true 192.0.2.10')
  })

  it('resizes a pod in place with patch --subresource=resize, and prints the refusal of a QoS class change', async () => {
    const pod = d.manifest(
      'resizable.yaml',
      [
        'apiVersion: v1',
        'kind: Pod',
        'metadata: {name: resizable}',
        'spec:',
        '  containers:',
        '  - name: app',
        '    image: nginx:1.27',
        '    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 500m, memory: 128Mi}}',
      ].join('\n'),
    )
    assert.equal(await ok('create', '-f', pod), 'pod/resizable created\n')
    const grow = '{"spec":{"containers":[{"name":"app","image":"other","resources":{"requests":{"cpu":"200m","memory":"64Mi"},"limits":{"cpu":"1","memory":"128Mi"}}}]}}'
    assert.equal(await ok('patch', 'pod', 'resizable', '--subresource=resize', '--type=merge', '-p', grow), 'pod/resizable patched\n')
    const read = await ok('get', 'pod', 'resizable', '-o', 'jsonpath={.spec.containers[0].resources.requests.cpu} {.spec.containers[0].resources.limits.cpu} {.spec.containers[0].image}')
    assert.equal(read, '200m 1 nginx:1.27')
    const equalize = '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1","memory":"128Mi"}}}]}}'
    const refused = await d.kubectl('patch', 'pod', 'resizable', '--subresource=resize', '-p', equalize)
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /The Pod "resizable" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing/)
  })

  it("keeps a deployment's labels when its status is patched, as upstream's deployment status strategy does", async () => {
    await ok('label', 'deployment', 'web', 'tier=stored')
    await ok('patch', 'deployment', 'web', '--subresource=status', '--type=merge', '-p', '{"metadata":{"labels":{"tier":"sent"},"annotations":{"note":"sent"}}}')
    assert.equal(await ok('get', 'deployment', 'web', '-o', 'jsonpath={.metadata.labels.tier} {.metadata.annotations.note}'), 'stored sent')
  })
})
