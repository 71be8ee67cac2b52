/**
 * `--workers`: one daemon serving from several processes behind its one
 * secure port, on etcd. The workers are servers of their own (one identity
 * lease each) and answer many requests in parallel; a worker killed with
 * SIGKILL while a client writes loses no acknowledged write and comes back
 * as a new process; SIGTERM to the first process ends every worker and
 * exits 0. A count below 1 and one that is not a number are refused; a
 * worker that cannot start stops the daemon rather than being restarted.
 * (Several workers on the embedded store: workers-embedded.test.ts.)
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { BIN, Daemon, eventually, freePort } from './daemon.js'
import { call, isRunning, workerPids, writeThroughWorkerKill } from './worker-requests.js'

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { written: name } })

describe('--workers=2 on etcd', () => {
  let etcd: EtcdServer | undefined
  let daemon: Daemon

  before(async () => {
    etcd = await EtcdServer.start()
    daemon = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`, '--workers=2'])
  })
  after(async () => {
    await daemon?.stop()
    await etcd?.destroy()
  })

  it('runs two worker processes, each a server with its own identity lease', async () => {
    assert.equal((await workerPids(daemon)).length, 2)
    await eventually(async () => {
      const names = (await daemon.ok('get', 'leases', '-n', 'kube-system', '-l', 'apiserver.kubernetes.io/identity=kube-apiserver', '-o', 'name')).trim().split('\n')
      assert.equal(new Set(names).size, 2, `identity leases: ${names.join(' ')}`)
    }, 20_000)
    assert.match(daemon.logs.join(''), /with 2 worker processes/)
  })

  it('creates and reads objects with kubectl', async () => {
    await daemon.ok('create', 'namespace', 'workers')
    await daemon.ok('create', 'configmap', 'settings', '-n', 'workers', '--from-literal=mode=fast')
    assert.equal(await daemon.ok('get', 'configmap', 'settings', '-n', 'workers', '-o', 'jsonpath={.data.mode}'), 'fast')
  })

  it('answers many requests in parallel, each on a connection of its own', async () => {
    const creates = await Promise.all(Array.from({ length: 40 }, (_, i) => call(daemon, 'POST', '/api/v1/namespaces/default/configmaps', configMap(`parallel-${i}`))))
    assert.deepEqual(creates.map((a) => a.status), creates.map(() => 201), creates.map((a) => a.body).join('\n'))
    const reads = await Promise.all(Array.from({ length: 40 }, (_, i) => call(daemon, 'GET', `/api/v1/namespaces/default/configmaps/parallel-${i}`)))
    assert.deepEqual(reads.map((a) => a.status), reads.map(() => 200))
  })

  it('keeps every acknowledged write when a worker is killed, and starts a new one', async () => {
    const { acknowledged, failures } = await writeThroughWorkerKill(daemon, '/api/v1/namespaces/default/configmaps', { before: 5, after: 10 })
    const listed = JSON.parse((await call(daemon, 'GET', '/api/v1/namespaces/default/configmaps')).body) as { items: { metadata: { name: string } }[] }
    const stored = new Set(listed.items.map((item) => item.metadata.name))
    assert.deepEqual(acknowledged.filter((a) => !stored.has(a.name)), [], `lost acknowledged writes (${failures} attempts failed)`)
    assert.match(daemon.logs.join(''), /worker \d exited; restarting it/)
  })

  it('ends every worker and exits 0 on SIGTERM', async () => {
    const workers = await workerPids(daemon)
    assert.equal(workers.length, 2)
    assert.equal(await daemon.terminate(), 0)
    await eventually(() => assert.deepEqual(workers.filter(isRunning), []), 5_000)
  })
})

/** Runs the daemon with `args` until it exits; its exit code, output, and whether its port ever answered. */
async function refusedStart(args: string[]): Promise<{ code: number | null; output: string; served: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-e2e-'))
  const port = await freePort()
  try {
    const child = spawn(process.execPath, [BIN, `--secure-port=${port}`, '--bind-address=127.0.0.1', `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d) => (output += String(d)))
    child.stderr.on('data', (d) => (output += String(d)))
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
    clearTimeout(timer)
    const portAnswers = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy()
        resolve(true)
      })
      socket.on('error', () => resolve(false))
    })
    return { code, output, served: portAnswers || existsSync(join(dir, 'pki', 'admin.kubeconfig')) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('--workers refused at start-up', () => {
  const cases: { args: string[]; says: RegExp }[] = [
    { args: ['--workers=0'], says: /--workers 0 must be 1 or more/ },
    { args: ['--workers=x'], says: /invalid argument "x" for "--workers" flag/ },
  ]
  for (const c of cases) {
    it(`refuses ${c.args.join(' ')}`, async () => {
      const result = await refusedStart(c.args)
      assert.equal(result.code, 1, result.output)
      assert.match(result.output, c.says)
      assert.equal(result.served, false)
    })
  }

  it('stops, and restarts no worker, when a worker fails before serving', async () => {
    // The token file is read by each worker: the first process knows nothing of the failure until a worker exits.
    const missing = join(tmpdir(), `no-such-dir-${process.pid}`, 'tokens.csv')
    const result = await refusedStart(['--workers=2', '--etcd-servers=http://127.0.0.1:1', `--token-auth-file=${missing}`])
    assert.equal(result.code, 1, result.output)
    assert.match(result.output, /--token-auth-file: cannot read/)
    assert.match(result.output, /stopped before it served; stopping the others/)
    assert.doesNotMatch(result.output, /restarting it/)
    assert.equal(result.served, false)
  })
})
