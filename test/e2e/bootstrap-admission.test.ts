/**
 * Start-up under an admission chain that refuses every write: the server's
 * own bootstrap objects are read before anything is written, so a restart on
 * existing data with AlwaysDeny serves at once, and a first start that cannot
 * write them keeps serving and reports the unfinished hooks in /readyz
 * instead of exiting.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { BIN, Daemon, freePort } from './daemon.js'

const DENY = '--enable-admission-plugins=AlwaysDeny'
const DENIED = /admission control is denying all modifications/

describe('a restart with AlwaysDeny on existing data', () => {
  let daemon: Daemon | undefined
  after(async () => {
    await daemon?.stop()
  })

  it('starts, is ready, answers reads and refuses writes', async () => {
    const first = await Daemon.start()
    await first.ok('create', 'configmap', 'kept', '--from-literal=a=b')
    assert.equal(await first.terminate(), 0)

    daemon = await Daemon.start([DENY], { dir: first.dir, port: first.port })
    assert.equal(daemon.process.exitCode, null, 'the daemon is running')
    assert.equal((await daemon.kubectl('get', '--raw', '/readyz')).stdout, 'ok')
    const namespaces = await daemon.ok('get', 'namespaces', '-o', 'jsonpath={.items[*].metadata.name}')
    assert.deepEqual(namespaces.split(' ').sort(), ['default', 'kube-node-lease', 'kube-public', 'kube-system'])
    assert.equal(await daemon.ok('get', 'configmap', 'kept', '-o', 'jsonpath={.data.a}'), 'b')

    const create = await daemon.kubectl('create', 'namespace', 'refused')
    assert.notEqual(create.code, 0)
    assert.match(create.stderr, /namespaces "refused" is forbidden: admission control is denying all modifications/)
    const lookup = await daemon.kubectl('get', 'namespace', 'refused')
    assert.match(lookup.stderr, /NotFound/, 'nothing was stored')
    const update = await daemon.kubectl('label', 'configmap', 'kept', 'x=y')
    assert.match(update.stderr, DENIED)
    assert.equal(await daemon.ok('get', 'configmap', 'kept', '-o', 'jsonpath={.metadata.labels}'), '', 'the configmap is unchanged')
  })
})

describe('a first start with AlwaysDeny', () => {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-e2e-'))
  const logs: string[] = []
  let child: ReturnType<typeof spawn> | undefined
  after(() => {
    child?.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  })

  it('keeps serving, reports the bootstrap it could not write in /readyz, and still refuses writes', async () => {
    const port = await freePort()
    child = spawn(process.execPath, [BIN, `--secure-port=${port}`, '--bind-address=127.0.0.1', `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`, DENY], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout?.on('data', (d) => logs.push(String(d)))
    child.stderr?.on('data', (d) => logs.push(String(d)))
    // The first start writes the admin kubeconfig once it listens.
    const kubeconfig = join(dir, 'pki', 'admin.kubeconfig')
    const kubectl = (...args: string[]) => runKubectl(kubeconfig, dir, args)
    // A bound, not a measure: a loaded machine takes seconds to start.
    const deadline = Date.now() + 60_000
    let readyz = ''
    for (;;) {
      assert.equal(child.exitCode, null, `the daemon exited:\n${logs.join('')}`)
      if (existsSync(kubeconfig)) {
        readyz = (await kubectl('get', '--raw', '/readyz?verbose')).stderr
        if (readyz.includes('readyz check failed')) break
      }
      assert.ok(Date.now() < deadline, `the daemon never answered /readyz:\n${logs.join('')}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    // Upstream's hooks for the objects it could not create stay unfinished; the server does not exit.
    assert.match(readyz, /\[-\]poststarthook\/scheduling\/bootstrap-system-priority-classes failed/)
    assert.match(readyz, /\[-\]poststarthook\/priority-and-fairness-config-producer failed/)
    assert.match(readyz, /\[\+\]etcd ok/)
    assert.match(logs.join(''), /start-up work failed; trying again later/)

    const list = await kubectl('get', 'priorityclasses')
    assert.equal(list.code, 0, list.stderr)
    const create = await kubectl('create', 'namespace', 'refused')
    assert.match(create.stderr, DENIED)
    assert.match((await kubectl('get', 'namespace', 'refused')).stderr, /NotFound/, 'nothing was stored')
    assert.equal(child.exitCode, null, 'still running')
  })
})

function runKubectl(kubeconfig: string, home: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, HOME: home }, timeout: 90_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) })
    })
  })
}
