/**
 * The built daemon as the `kube-apiserver` of Go's envtest and Java's
 * kube-api-test: each harness's files, command line and readiness checks
 * played as the harness does them (harnesses.ts), the binary found where the
 * harness looks for it, on a real etcd, then kubectl as the harness's admin.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { request } from 'node:https'
import { connect } from 'node:tls'
import { after, afterEach, before, beforeEach, describe, it } from 'node:test'
import { helpText } from '../../core/options/flags/help.js'
import { KEPT_HELP_FILE } from '../../runtimes/node/daemon/kept-help.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { BIN, freePort, type KubectlResult } from './daemon.js'
import { helpListsFlag, prepareEnvtest, prepareKubeApiTest, probe } from './harnesses.js'

/** A bound on start-up for a loaded machine, not a measure: envtest's own default is 20 s. */
const START_WITHIN_MS = 60_000

/** The three programs of a harness's binaries folder: this build's bin under upstream's name, and the etcd and kubectl on PATH. */
function binariesFolder(dir: string): string {
  mkdirSync(dir, { recursive: true })
  symlinkSync(BIN, join(dir, 'kube-apiserver'))
  for (const tool of ['etcd', 'kubectl']) symlinkSync(execFileSync('which', [tool], { encoding: 'utf8' }).trim(), join(dir, tool))
  return dir
}

/** The server process as a harness holds it: its output kept for a failure message. */
class Started {
  readonly output: string[] = []
  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (d) => this.output.push(String(d)))
    child.stderr?.on('data', (d) => this.output.push(String(d)))
  }

  static exec(path: string, args: string[]): Started {
    return new Started(spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'] }))
  }

  /** Polls `ready` every `intervalMs` until it holds; fails when the process exits first. */
  async until(ready: () => Promise<boolean>, intervalMs: number, what: string): Promise<void> {
    const deadline = Date.now() + START_WITHIN_MS
    for (;;) {
      if (this.child.exitCode !== null) throw new Error(`kube-apiserver exited with ${this.child.exitCode} before ${what}:\n${this.output.join('')}`)
      if (await ready()) return
      if (Date.now() > deadline) throw new Error(`no ${what} within ${START_WITHIN_MS / 1000} s:\n${this.output.join('')}`)
      await new Promise((r) => setTimeout(r, intervalMs))
    }
  }

  /** envtest stops with SIGTERM, kube-api-test with SIGKILL; the exit code, or the signal's name. */
  async stop(signal: NodeJS.Signals): Promise<number | string> {
    if (this.child.exitCode !== null) return this.child.exitCode
    const exited = new Promise<number | string>((resolve) => this.child.once('exit', (code, sig) => resolve(code ?? sig ?? 'unknown')))
    this.child.kill(signal)
    const guard = setTimeout(() => this.child.kill('SIGKILL'), 20_000)
    try {
      return await exited
    } finally {
      clearTimeout(guard)
    }
  }
}

function kubectl(kubectlPath: string, home: string, env: NodeJS.ProcessEnv, args: string[]): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(kubectlPath, args, { env: { ...process.env, HOME: home, KUBECACHEDIR: join(home, 'cache'), ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) })
    })
  })
}

/** The DER of the certificate the server presents, without verifying it. */
function presentedCertificate(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      resolve(socket.getPeerCertificate().raw)
      socket.end()
    })
    socket.on('error', reject)
  })
}

/** One GET, answered whenever the server answers it (no timeout of its own): its status, or 0 when the connection failed. */
function heldRequest(url: string, client?: { cert: string; key: string }): { status: Promise<number>; answered: () => boolean } {
  let answered = false
  const status = new Promise<number>((resolve) => {
    const req = request(url, { rejectUnauthorized: false, agent: false, ...(client ?? {}) }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', () => resolve(0))
    req.end()
  }).finally(() => (answered = true))
  return { status, answered: () => answered }
}

const WIDGETS = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.harness.example.com}
spec:
  group: harness.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`
const WIDGET = '{"apiVersion":"harness.example.com/v1","kind":"Widget","metadata":{"name":"first","namespace":"operators"},"spec":{"size":3}}'

/**
 * What an operator's test does first, as the harness's admin: install a CRD,
 * create a namespace and a custom object, read it back; then a service
 * account token, signed with the harness's key, is accepted for its account.
 */
async function exerciseAsAdmin(
  run: (...args: string[]) => Promise<KubectlResult>,
  runWithToken: (token: string, ...args: string[]) => Promise<KubectlResult>,
  dir: string,
  admin: { name: string },
): Promise<void> {
  const ok = async (...args: string[]) => {
    const r = await run(...args)
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}`)
    return r.stdout
  }
  const whoami = JSON.parse(await ok('auth', 'whoami', '-o', 'json')) as { status: { userInfo: { username: string; groups: string[] } } }
  assert.equal(whoami.status.userInfo.username, admin.name)
  assert.ok(whoami.status.userInfo.groups.includes('system:masters'), JSON.stringify(whoami))

  writeFileSync(join(dir, 'widgets.yaml'), WIDGETS)
  await ok('apply', '-f', join(dir, 'widgets.yaml'))
  await ok('wait', '--for', 'condition=established', '--timeout=30s', 'crd/widgets.harness.example.com')
  await ok('create', 'namespace', 'operators')
  writeFileSync(join(dir, 'widget.json'), WIDGET)
  // Discovery of the new group may lag the Established condition by a moment, in kubectl's cache too.
  for (let attempt = 0; ; attempt++) {
    const r = await run('create', '-f', join(dir, 'widget.json'))
    if (r.code === 0) break
    if (attempt >= 20) assert.fail(`kubectl create widget failed:\n${r.stderr}`)
    await new Promise((res) => setTimeout(res, 250))
  }
  assert.equal(await ok('get', 'widgets', 'first', '-n', 'operators', '-o', 'jsonpath={.spec.size}'), '3')

  await ok('create', 'serviceaccount', 'robot', '-n', 'operators')
  const token = (await ok('create', 'token', 'robot', '-n', 'operators')).trim()
  const asRobot = await runWithToken(token, 'auth', 'whoami', '-o', 'json')
  assert.equal(asRobot.code, 0, asRobot.stderr)
  const robot = JSON.parse(asRobot.stdout) as { status: { userInfo: { username: string } } }
  assert.equal(robot.status.userInfo.username, 'system:serviceaccount:operators:robot')
}

describe('as the kube-apiserver of test harnesses', () => {
  // Each harness starts an etcd of its own.
  let etcd: EtcdServer | undefined
  let root: string
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'apiserver-harness-'))
  })
  beforeEach(async () => {
    etcd = await EtcdServer.start()
  })
  afterEach(async () => {
    await etcd?.destroy()
  })
  after(() => {
    if (root) rmSync(root, { recursive: true, force: true })
  })

  it("starts from envtest's KUBEBUILDER_ASSETS with its command line and files, serves its certificate and answers its admin", async () => {
    const assets = binariesFolder(join(root, 'kubebuilder', 'bin'))
    const apiserver = join(assets, 'kube-apiserver')

    // envtest reads the help for --insecure-port: listed, it would pass --insecure-port=0.
    const help = execFileSync(apiserver, ['--help'], { encoding: 'utf8' })
    assert.equal(help, helpText())
    assert.equal(helpListsFlag(help, 'insecure-port'), false)

    const certDir = mkdtempSync(join(root, 'k8s_test_framework_'))
    const port = await freePort()
    const setup = await prepareEnvtest(certDir, { address: '127.0.0.1', port, etcdUrl: etcd!.clientUrl })
    for (const arg of setup.args) assert.ok(help.includes(arg.slice(0, arg.indexOf('='))), `--help does not name ${arg}`)
    const harnessFiles = Object.fromEntries(readdirSync(certDir).map((f) => [f, readFileSync(join(certDir, f), 'utf8')]))

    const server = Started.exec(apiserver, setup.args)
    try {
      // envtest: GET /healthz without a client certificate, TLS unverified, every 100 ms.
      await server.until(async () => (await probe(`https://127.0.0.1:${port}/healthz`)) === 200, 100, 'an answer 200 on /healthz')
      const kubeconfig = join(certDir, 'admin.kubecfg')
      writeFileSync(kubeconfig, setup.kubeconfig)
      const run = (...args: string[]) => kubectl(join(assets, 'kubectl'), root, {}, ['--kubeconfig', kubeconfig, ...args])
      // Then the default namespace, as its admin, every 50 ms.
      await server.until(async () => (await run('get', 'namespace', 'default')).code === 0, 50, 'the default namespace')

      const served = new X509Certificate(await presentedCertificate(port))
      assert.ok(served.raw.equals(new X509Certificate(harnessFiles['apiserver.crt']!).raw), 'the server presents the apiserver.crt envtest wrote')
      const adminCert = { cert: setup.admin.certificate, key: setup.admin.privateKey }
      assert.equal(await probe(`https://127.0.0.1:${port}/healthz`, adminCert), 200)

      // A client of a service account: the server's URL and CA, the token alone.
      const servingCaFile = join(root, 'envtest-serving-ca.crt')
      writeFileSync(servingCaFile, setup.servingCa)
      const runWithToken = (token: string, ...args: string[]) =>
        kubectl(join(assets, 'kubectl'), root, { KUBECONFIG: join(root, 'none') }, [`--server=https://127.0.0.1:${port}`, `--certificate-authority=${servingCaFile}`, `--token=${token}`, ...args])
      await exerciseAsAdmin(run, runWithToken, root, { name: 'admin' })

      // Nothing of envtest's was rewritten, and nothing was added to its directory.
      for (const [file, text] of Object.entries(harnessFiles)) assert.equal(readFileSync(join(certDir, file), 'utf8'), text, file)
      assert.deepEqual(readdirSync(certDir).sort(), [...Object.keys(harnessFiles), 'admin.kubecfg'].sort())
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0, server.output.join(''))
    }
  })

  it("runs a controller author's steps with envtest's command line plus --controllers and --simulated-nodes", async () => {
    const assets = binariesFolder(join(root, 'kubebuilder-controllers', 'bin'))
    const certDir = mkdtempSync(join(root, 'k8s_test_framework_'))
    const port = await freePort()
    const setup = await prepareEnvtest(certDir, { address: '127.0.0.1', port, etcdUrl: etcd!.clientUrl })
    // What envtest's APIServer.Configure().Set("controllers", "*") and Set("simulated-nodes", "3") append.
    const server = Started.exec(join(assets, 'kube-apiserver'), [...setup.args, '--controllers=*', '--simulated-nodes=3'])
    try {
      await server.until(async () => (await probe(`https://127.0.0.1:${port}/healthz`)) === 200, 100, 'an answer 200 on /healthz')
      const kubeconfig = join(certDir, 'admin.kubecfg')
      writeFileSync(kubeconfig, setup.kubeconfig)
      const run = async (...args: string[]) => {
        const result = await kubectl(join(assets, 'kubectl'), root, {}, ['--kubeconfig', kubeconfig, ...args])
        assert.equal(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`)
        return result.stdout
      }
      await server.until(async () => (await kubectl(join(assets, 'kubectl'), root, {}, ['--kubeconfig', kubeconfig, 'get', 'namespace', 'default'])).code === 0, 50, 'the default namespace')
      // The simulated nodes register once the bootstrap policy is in, as kubelets do.
      await server.until(async () => (await run('get', 'nodes', '-o', 'name')) === 'node/node-0\nnode/node-1\nnode/node-2\n', 50, 'three Ready nodes')
      await run('create', 'namespace', 'team')
      await run('create', 'deployment', 'web', '--image=nginx', '--replicas=3', '-n', 'team')
      assert.match(await run('rollout', 'status', 'deployment/web', '-n', 'team', '--timeout=60s'), /successfully rolled out/)
      assert.equal((await run('get', 'pods', '-n', 'team', '--field-selector=status.phase=Running', '-o', 'name')).trim().split('\n').length, 3)
      // kubectl logs and exec go the node-agent path to a simulated node's agent, which answers in process.
      assert.match(await run('logs', 'deployment/web', '-n', 'team'), /^simulated container nginx of pod team\/web-[a-z0-9]+-[a-z0-9]{5}: no process runs here\n$/)
      assert.match(await run('exec', 'deployment/web', '-n', 'team', '--', 'echo', 'hello'), /^simulated container nginx of pod team\/web-[a-z0-9]+-[a-z0-9]{5} ran "echo hello": no process runs here\n$/)
      // Port-forwarding has no simulation: refused at once, naming why.
      const forward = await kubectl(join(assets, 'kubectl'), root, {}, ['--kubeconfig', kubeconfig, 'port-forward', 'deployment/web', '-n', 'team', '18080:80'])
      assert.notEqual(forward.code, 0)
      assert.match(forward.stderr, /port-forwarding is not simulated: pod team\/web-[a-z0-9]+-[a-z0-9]{5} runs on a simulated node/)
      await run('delete', 'namespace', 'team', '--timeout=60s')
      const gone = await kubectl(join(assets, 'kubectl'), root, {}, ['--kubeconfig', kubeconfig, 'get', 'namespace', 'team'])
      assert.match(gone.stderr, /namespaces "team" not found/)
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0, server.output.join(''))
    }
  })

  /** envtest's start with etcd down, once the server waits for it: the process, its port and envtest's admin. */
  async function startWhileEtcdIsDown(extraArgs: string[] = []) {
    await etcd!.pause()
    const certDir = mkdtempSync(join(root, 'k8s_test_framework_'))
    const port = await freePort()
    const setup = await prepareEnvtest(certDir, { address: '127.0.0.1', port, etcdUrl: etcd!.clientUrl })
    const server = Started.exec(BIN, [...setup.args, ...extraArgs])
    await server.until(async () => server.output.join('').includes('waiting for etcd'), 50, 'the wait for etcd')
    return { server, port, admin: { cert: setup.admin.certificate, key: setup.admin.privateKey } }
  }

  it('opens its port while etcd is down and answers what came meanwhile once start-up is through', async () => {
    const { server, port, admin } = await startWhileEtcdIsDown()
    try {
      // A harness's connection and TLS handshake need no store.
      assert.ok(await presentedCertificate(port).then(() => true, () => false), 'a TLS handshake while etcd is down')
      const read = heldRequest(`https://127.0.0.1:${port}/api/v1/namespaces/default`, admin)
      const health = heldRequest(`https://127.0.0.1:${port}/healthz`)
      // Neither is answered, or refused, while there is no server to answer it.
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.equal(read.answered() || health.answered(), false, server.output.join(''))
      await etcd!.resume()
      // Both waited for start-up to be through, and were answered then, as requests to a server that serves.
      assert.equal(await read.status, 200, server.output.join(''))
      assert.equal(await health.status, 200, server.output.join(''))
      // And it serves: a SIGTERM right after an answer is a graceful stop (below), not the end of a process without its handlers.
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0, server.output.join(''))
    }
  })

  it('refuses what came while etcd was down when the store does not come in time, and exits', async () => {
    const { server, port, admin } = await startWhileEtcdIsDown(['--storage-initialization-timeout=3s'])
    try {
      assert.equal(await heldRequest(`https://127.0.0.1:${port}/api/v1/namespaces/default`, admin).status, 503)
      const exit = await new Promise<number | null>((resolve) => (server.child.exitCode !== null ? resolve(server.child.exitCode) : server.child.once('exit', resolve)))
      assert.equal(exit, 1)
      assert.match(server.output.join(''), /storage initialization failed/)
    } finally {
      await server.stop('SIGKILL')
    }
  })

  it("starts from kube-api-test's binaries folder with its command line and self-signed files, and answers its client", async () => {
    // kube-api-test keeps its certificates in its directory (~/.kubeapitest) and binaries under k8s/<version>-<os>-<arch>/.
    const dir = join(root, 'kubeapitest')
    const bin = binariesFolder(join(dir, 'k8s', `1.32.0-linux-${process.arch === 'x64' ? 'amd64' : process.arch}`))
    const port = await freePort()
    const setup = await prepareKubeApiTest(dir, port, Number(new URL(etcd!.clientUrl).port))
    const harnessFiles = Object.fromEntries(['apiserver.crt', 'apiserver.key', 'client.crt', 'client.key'].map((f) => [f, readFileSync(join(dir, f), 'utf8')]))
    // Its user's own flags (withApiServerFlag) come first: loopback only, as tests here run.
    const server = Started.exec(join(bin, 'kube-apiserver'), ['--bind-address', '127.0.0.1', ...setup.args])
    try {
      const client = { cert: harnessFiles['client.crt']!, key: harnessFiles['client.key']! }
      // kube-api-test: GET /readyz with its client certificate, TLS unverified, every 200 ms.
      await server.until(async () => (await probe(`https://127.0.0.1:${port}/readyz`, client)) === 200, 200, 'an answer 200 on /readyz')
      // Its kubectl flags; KUBECONFIG names a file that does not exist, so no kubeconfig gets in the way.
      const flags = [
        `--client-certificate=${setup.files.clientCert}`,
        `--client-key=${setup.files.clientKey}`,
        `--certificate-authority=${setup.files.serverCert}`,
        `--server=https://127.0.0.1:${port}`,
        '--request-timeout=5s',
      ]
      const run = (...args: string[]) => kubectl(join(bin, 'kubectl'), root, { KUBECONFIG: join(dir, '.kubeconfig') }, [...flags, ...args])
      await server.until(async () => (await run('get', 'ns', 'default')).code === 0, 200, 'the default namespace')

      const runWithToken = (token: string, ...args: string[]) =>
        kubectl(join(bin, 'kubectl'), root, { KUBECONFIG: join(dir, '.kubeconfig') }, [`--certificate-authority=${setup.files.serverCert}`, `--server=https://127.0.0.1:${port}`, `--token=${token}`, ...args])
      await exerciseAsAdmin(run, runWithToken, root, { name: 'kubeapitest' })

      for (const [file, text] of Object.entries(harnessFiles)) assert.equal(readFileSync(join(dir, file), 'utf8'), text, file)
      assert.deepEqual(readdirSync(dir).sort(), [...Object.keys(harnessFiles), 'k8s'].sort())
    } finally {
      assert.equal(await server.stop('SIGKILL'), 'SIGKILL')
    }
  })
})

describe("the bins' --help", () => {
  it("is printed from the build's help file, without loading the daemon, and is the daemon's own help", () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-help-'))
    try {
      // The bins' file and the help file alone: the daemon's script is not there to load.
      copyFileSync(BIN, join(dir, 'main.cjs'))
      copyFileSync(join(dirname(BIN), KEPT_HELP_FILE), join(dir, KEPT_HELP_FILE))
      for (const flag of ['--help', '-h']) assert.equal(execFileSync(process.execPath, [join(dir, 'main.cjs'), flag], { encoding: 'utf8' }), helpText(), flag)
      // Any other command line is the daemon's to parse, and it is missing here.
      assert.throws(() => execFileSync(process.execPath, [join(dir, 'main.cjs'), '--help=true'], { stdio: 'pipe' }), /daemon/)
      // The daemon's parsing prints the same text.
      assert.equal(execFileSync(process.execPath, [BIN, '--secure-port=1', '--help'], { encoding: 'utf8' }), helpText())
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
