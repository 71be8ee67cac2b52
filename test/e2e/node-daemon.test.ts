/** The daemon as users run it: generated PKI, kubectl with the admin kubeconfig, a watch ended by shutdown. */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { after, before, describe, it } from 'node:test'
import { type DaemonListening, runDaemon } from '../../runtimes/node/daemon/daemon.js'

const exec = promisify(execFile)

describe('apiserver daemon', () => {
  let root: string
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'apiserver-daemon-'))
  })
  after(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('starts with generated certificates, serves kubectl, and stops a watch on shutdown', async () => {
    const stop = new AbortController()
    const logs: string[] = []
    let onListening: (info: DaemonListening) => void = () => {}
    const listening = new Promise<DaemonListening>((resolve) => {
      onListening = resolve
    })
    const exited = runDaemon(['--cert-dir', join(root, 'pki'), '--secure-port=0', '--bind-address=127.0.0.1', '--data-dir', join(root, 'data')], {
      stop: stop.signal,
      stdout: () => {},
      stderr: (t) => logs.push(t),
      logStream: { write: (line: string) => logs.push(line) },
      onListening,
    })
    try {
      await serveAndStop()
    } finally {
      // A failed assertion must not leave the daemon running (the test process would never end).
      stop.abort('test over')
      await exited.catch(() => {})
    }

    async function serveAndStop(): Promise<void> {
      const info = await Promise.race([listening, exited.then((code) => assert.fail(`daemon exited with ${code}: ${logs.join('')}`))])
      assert.ok(info.kubeconfigPath)
      assert.ok(logs.some((l) => l.includes('objects are stored in the embedded store in')), 'says where objects are stored')
      assert.ok(logs.some((l) => l.includes(`kubectl --kubeconfig ${info.kubeconfigPath} get ns`)))

      const env = { ...process.env, KUBECACHEDIR: join(root, 'kube-cache'), HOME: root }
      const kubectl = ['--kubeconfig', info.kubeconfigPath]
      const { stdout } = await exec('kubectl', [...kubectl, 'get', 'ns', '-o', 'name'], { env, timeout: 20_000 })
      assert.match(stdout, /namespace\/kube-system/)
      const whoami = await exec('kubectl', [...kubectl, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], { env, timeout: 20_000 })
      assert.equal(whoami.stdout, 'kubernetes-admin')

      const watch = spawn('kubectl', [...kubectl, 'get', 'ns', '-w'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      const watchExit = new Promise<number | null>((resolve) => watch.once('exit', resolve))
      await new Promise<void>((resolve) => watch.stdout.once('data', () => resolve()))
      stop.abort('SIGTERM')
      assert.equal(await exited, 0)
      // A bound, not a measurement: a watch still open after 10 s was never ended.
      const code = await Promise.race([watchExit, new Promise<'hung'>((r) => setTimeout(r, 10_000, 'hung'))])
      if (code === 'hung') watch.kill()
      assert.notEqual(code, 'hung', 'the watch ended with the server')
    }
  })
})
