/**
 * The packed package (`npm pack`), installed into a project of its own and
 * used both ways: the `apiserver` and `kube-apiserver` bins print the
 * daemon's help and start to /readyz (on etcd too), and `import ... from 'kube-apiserver-ts'` (and `/node`) works
 * under Node, Bun and Deno, with its type declarations resolving for tsc and
 * `deno check`.
 *
 * Installing: the tarball is unpacked into the project's node_modules and its
 * bin linked, as npm does, and each of its declared `dependencies` is linked
 * from this checkout's node_modules instead of being downloaded (a cold
 * `npm install` of the tarball takes about a minute, mostly fetching). Only
 * the declared dependencies are visible to the package, so a file left out of
 * `files`, a wrong `exports`, `bin` or `types` path, or an import of a package
 * that is only a dev dependency fails here as on a user's machine.
 * PACK_TEST_NPM_INSTALL=1 installs the tarball with npm itself instead
 * (`npm install --prefer-offline`, the registry for the dependencies: 35 s
 * with a warm cache). Needs `npm run build` first (the tarball carries dist/).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { helpText } from '../../core/options/flags/index.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon } from './daemon.js'

const exec = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')
const PACKAGE = 'kube-apiserver-ts'

/**
 * A consumer's script: an embedded server answering /version in process, the
 * Node entry's listen() exported, and its YAML decoder's worker thread started
 * from the installed files (it answers JSON text; 'here' would mean no worker).
 */
const CONSUMER = `
import { ADMIN_IDENTITY, createApiServer } from '${PACKAGE}'
import { listen, nodeYamlDecoder } from '${PACKAGE}/node'
const yamlDecoder = nodeYamlDecoder()
const yaml = await yamlDecoder.decodeToJson('a: [1, 2]\\n', false)
await yamlDecoder.close()
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, record: true })
const res = await server.fetch(new Request('http://in-process/api/v1/namespaces/default'))
const ns = await res.json()
console.log(JSON.stringify({ status: res.status, name: ns.metadata.name, listen: typeof listen, recorded: server.activity.requests().length, yaml }))
await server.shutdown()
`
const CONSUMER_OUTPUT = { status: 200, name: 'default', listen: 'function', recorded: 1, yaml: { kind: 'json', json: '{"a":[1,2]}', duplicates: [] } }

/** The same in TypeScript, for tsc to check against the package's declarations. */
const TYPED_CONSUMER = `
import { type ApiServer, type RecordedRequest, createApiServer, manualClock } from '${PACKAGE}'
import { listen } from '${PACKAGE}/node'
const server: ApiServer = createApiServer({ record: { limit: 10 } }, { now: manualClock().now })
const requests: RecordedRequest[] = server.activity.requests()
const listening: ReturnType<typeof listen> = listen(server)
export { requests, listening }
`

/** Where the installed package's library script and its code caches are. */
const libraryCachesIn = (project: string): string => join(project, 'node_modules', PACKAGE, 'dist', 'runtimes', 'node')

/** The code caches earlier imports wrote (the first process that finds none writes one). */
function removeLibraryCaches(project: string): void {
  const dir = libraryCachesIn(project)
  for (const file of readdirSync(dir)) if (file.startsWith('library-script.cjs.v8-cache')) rmSync(join(dir, file))
}

interface PackResult {
  filename: string
  files: { path: string }[]
}

describe('the packed package, installed', () => {
  let dir = ''
  let project = ''
  let files: string[] = []

  before(async () => {
    assert.ok(existsSync(join(ROOT, 'dist', 'runtimes', 'node', 'main.cjs')), 'dist/ is missing: run npm run build first')
    dir = mkdtempSync(join(tmpdir(), 'apiserver-pack-'))
    // --ignore-scripts: `prepare` would build again; the test runs after a build.
    const { stdout } = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, timeout: 60_000, maxBuffer: 64 << 20 })
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as PackResult[]
    files = packed!.files.map((f) => f.path)
    project = join(dir, 'consumer')
    const installed = join(project, 'node_modules', PACKAGE)
    mkdirSync(installed, { recursive: true })
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { [PACKAGE]: `file:../${packed!.filename}` } }))
    writeFileSync(join(project, 'consumer.mjs'), CONSUMER)
    writeFileSync(join(project, 'consumer.ts'), TYPED_CONSUMER)
    if (process.env['PACK_TEST_NPM_INSTALL'] === '1') {
      // --ignore-scripts: the package's `prepare` builds from a checkout; an installed tarball is built already.
      await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project, timeout: 300_000 })
      return
    }
    // npm's tarballs hold the files under package/.
    await exec('tar', ['-xzf', join(dir, packed!.filename), '-C', installed, '--strip-components=1'], { timeout: 30_000 })
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { bin: Record<string, string>; dependencies: Record<string, string> }
    for (const dep of Object.keys(manifest.dependencies)) {
      const link = join(project, 'node_modules', dep)
      mkdirSync(dirname(link), { recursive: true })
      symlinkSync(join(ROOT, 'node_modules', dep), link, 'dir')
    }
    // The bin as npm links it: node_modules/.bin/<name>, the target made executable.
    mkdirSync(join(project, 'node_modules', '.bin'))
    for (const [name, target] of Object.entries(manifest.bin)) {
      chmodSync(join(installed, target), 0o755)
      symlinkSync(join('..', PACKAGE, target), join(project, 'node_modules', '.bin', name))
    }
  })
  after(() => {
    if (!dir) return
    // KEEP_PACK_DIR=1 leaves the project to look into by hand.
    if (process.env['KEEP_PACK_DIR'] === '1') console.log(`the installed project: ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  })

  it('holds the built daemon, the entry points and their declarations, and no tests', () => {
    for (const file of ['dist/runtimes/node/main.cjs', 'dist/runtimes/node/yaml-worker.js', 'dist/runtimes/node/library-script.cjs', 'dist/runtimes/node/library-core.js', 'dist/runtimes/node/library-node.js', 'dist/core/index.js', 'dist/core/index.d.ts', 'dist/runtimes/node/index.js', 'dist/runtimes/node/index.d.ts', 'core/index.ts', 'package.json', 'README.md']) {
      assert.ok(files.includes(file), `${file} is not in the package`)
    }
    assert.deepEqual(files.filter((f) => f.startsWith('test/') || f.includes('.test.')), [])
  })

  it('has its classic scripts in ASCII alone, which V8 reads in one copy', () => {
    for (const script of ['daemon-script.cjs', 'library-script.cjs']) {
      const bytes = readFileSync(join(project, 'node_modules', PACKAGE, 'dist', 'runtimes', 'node', script))
      assert.equal(bytes.findIndex((b) => b > 0x7f), -1, script)
    }
  })

  it('its apiserver bin, and the same under the kube-apiserver name test harnesses run, print the daemon help', async () => {
    for (const bin of ['apiserver', 'kube-apiserver']) {
      const { stdout } = await exec(join(project, 'node_modules', '.bin', bin), ['--help'], { cwd: project, timeout: 60_000 })
      assert.equal(stdout, helpText(), bin)
    }
  })

  it('its apiserver bin starts a server that answers /readyz and kubectl, and writes its code cache once, after the first requests', async () => {
    const cache = join(project, 'node_modules', PACKAGE, 'dist', 'runtimes', 'node', 'daemon-script.cjs.v8-cache')
    rmSync(cache, { force: true })
    const start = async (): Promise<void> => {
      const daemon = await Daemon.start([], { command: [join(project, 'node_modules', '.bin', 'apiserver')] })
      try {
        const { stdout } = await daemon.kubectl('get', 'namespace', 'default', '-o', 'jsonpath={.metadata.name}')
        assert.equal(stdout, 'default')
      } finally {
        await daemon.stop()
      }
    }
    // A run that never listens (the version asked for, a flag refused) keeps no cache of the little it ran.
    const bin = join(project, 'node_modules', '.bin', 'apiserver')
    assert.match((await exec(bin, ['--version'], { cwd: project, timeout: 60_000 })).stdout, /^Kubernetes v/)
    await assert.rejects(exec(bin, ['--secure-port=no'], { cwd: project, timeout: 60_000 }))
    assert.ok(!existsSync(cache), 'a run that never listened wrote a code cache')
    await start()
    assert.ok(existsSync(cache), 'no code cache was written')
    // Taken with the start-up's compiler flags set again: a cache V8 rejected would be written anew, another file.
    const written = statSync(cache).ino
    await start()
    assert.equal(statSync(cache).ino, written, 'the cache was rejected and written again')
  })

  it('its kube-apiserver bin starts on etcd with its own etcd client, no gRPC library for etcd among its dependencies', async () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', PACKAGE, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    assert.equal(manifest.dependencies['etcd3'], undefined, 'etcd3 is a development dependency only (the tests reach etcd through it)')
    const etcd = await EtcdServer.start()
    try {
      const daemon = await Daemon.start([`--etcd-servers=${etcd.clientUrl}`], { command: [join(project, 'node_modules', '.bin', 'kube-apiserver')] })
      try {
        assert.match(daemon.logs.join(''), /objects are stored in etcd/)
        const { stdout } = await daemon.kubectl('get', 'namespace', 'default', '-o', 'jsonpath={.metadata.name}')
        assert.equal(stdout, 'default')
      } finally {
        await daemon.stop()
      }
    } finally {
      await etcd.destroy()
    }
  })

  it('imports under Node: an embedded server answers, listen() is exported', async () => {
    const { stdout } = await exec(process.execPath, ['consumer.mjs'], { cwd: project, timeout: 60_000 })
    assert.deepEqual(JSON.parse(stdout), CONSUMER_OUTPUT)
  })

  it('under Node, from the code-cached library script: the exports of the ES module build, a cache written once and then used', async () => {
    const cache = join(libraryCachesIn(project), 'library-script.cjs.v8-cache')
    removeLibraryCaches(project)
    // The names each entry point exports through its `node` condition, against the ES module build's own.
    const names = `
const [core, node, esmCore, esmNode] = await Promise.all(['${PACKAGE}', '${PACKAGE}/node', './node_modules/${PACKAGE}/dist/core/index.js', './node_modules/${PACKAGE}/dist/runtimes/node/index.js'].map((m) => import(m)))
const { createApiServer, ADMIN_IDENTITY, StatusError } = core
const res = await createApiServer({ embeddedIdentity: ADMIN_IDENTITY }).fetch(new Request('http://in-process/api/v1/namespaces/nope'))
console.log(JSON.stringify({ core: Object.keys(core).sort(), node: Object.keys(node).sort(), esmCore: Object.keys(esmCore).sort(), esmNode: Object.keys(esmNode).sort(), status: res.status, fromScript: StatusError !== esmCore.StatusError }))
process.exit(0)
`
    writeFileSync(join(project, 'names.mjs'), names)
    const first = JSON.parse((await exec(process.execPath, ['names.mjs'], { cwd: project, timeout: 60_000 })).stdout) as Record<string, unknown>
    assert.deepEqual(first['core'], first['esmCore'])
    assert.deepEqual(first['node'], first['esmNode'])
    assert.equal(first['status'], 404)
    assert.equal(first['fromScript'], true, 'the node condition gave the ES module build, not the library script')
    // The first process wrote the cache at its exit; the next one takes it and leaves it as it is.
    assert.ok(existsSync(cache), 'no code cache was written')
    assert.ok(existsSync(`${cache}.node`), 'the cache is not marked as holding ./node too')
    // A cache is replaced by a rename, so a rewritten one is another file.
    const written = statSync(cache).ino
    const again = JSON.parse((await exec(process.execPath, ['names.mjs'], { cwd: project, timeout: 60_000 })).stdout) as Record<string, unknown>
    assert.deepEqual(again, first)
    assert.equal(statSync(cache).ino, written, 'a usable cache was written again')
  })

  it('under Node, listen() from the library script gives a port whose kubeconfig the server admits as the admin', async () => {
    // Its certificates come from the X.509 package bundled into the library script.
    const listening = `
import { request } from 'node:https'
import { ADMIN_IDENTITY, createApiServer } from '${PACKAGE}'
import { listen } from '${PACKAGE}/node'
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
const l = await listen(server)
const data = (field) => Buffer.from(new RegExp(field + ': ([A-Za-z0-9+/=]+)').exec(l.kubeconfig)[1], 'base64')
const answer = await new Promise((resolve, reject) => {
  const req = request(l.url + '/apis/authentication.k8s.io/v1/selfsubjectreviews', { method: 'POST', ca: data('certificate-authority-data'), cert: data('client-certificate-data'), key: data('client-key-data'), headers: { 'content-type': 'application/json' } }, (res) => {
    let body = ''
    res.on('data', (c) => (body += c)).on('end', () => resolve({ status: res.statusCode, user: JSON.parse(body).status?.userInfo?.username }))
  })
  req.on('error', reject).end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }))
})
await l.close()
await server.shutdown()
console.log(JSON.stringify(answer))
`
    writeFileSync(join(project, 'listening.mjs'), listening)
    const { stdout } = await exec(process.execPath, ['listening.mjs'], { cwd: project, timeout: 60_000 })
    assert.deepEqual(JSON.parse(stdout), { status: 201, user: 'kubernetes-admin' })
  })

  it('under Node, a process’s first server begins from the start-up an earlier process kept, unless reuseStartup is false', async () => {
    const uid = `
import { ADMIN_IDENTITY, createApiServer } from '${PACKAGE}'
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY, ...(process.argv[2] === 'afresh' ? { reuseStartup: false } : {}) })
const ns = await (await server.fetch(new Request('http://in-process/api/v1/namespaces/kube-system'))).json()
await server.shutdown()
console.log(ns.metadata.uid)
`
    writeFileSync(join(project, 'uid.mjs'), uid)
    const run = async (...args: string[]) => (await exec(process.execPath, ['uid.mjs', ...args], { cwd: project, timeout: 60_000 })).stdout.trim()
    const first = await run()
    assert.equal(await run(), first)
    assert.notEqual(await run('afresh'), first)
  })

  it('under Node, writes the code cache when a server has shut down, for a process that ends without an exit event (as test runners end theirs)', async () => {
    const cache = join(libraryCachesIn(project), 'library-script.cjs.v8-cache')
    removeLibraryCaches(project)
    const killed = `
import { ADMIN_IDENTITY, createApiServer } from '${PACKAGE}'
const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
await (await server.fetch(new Request('http://in-process/api/v1/namespaces'))).arrayBuffer()
await server.shutdown()
process.kill(process.pid, 'SIGKILL')
`
    writeFileSync(join(project, 'killed.mjs'), killed)
    const run = await exec(process.execPath, ['killed.mjs'], { cwd: project, timeout: 60_000 }).then(
      () => 'exited',
      (err: { signal?: string }) => err.signal,
    )
    assert.equal(run, 'SIGKILL')
    assert.ok(existsSync(cache), 'no code cache was written at shutdown')
    assert.ok(!existsSync(`${cache}.node`), 'a cache without ./node is marked as holding it')
  })

  it('imports under Bun (its "bun" condition: the TypeScript sources)', async () => {
    const { stdout } = await exec(join(ROOT, 'node_modules', '.bin', 'bun'), ['consumer.mjs'], { cwd: project, timeout: 60_000 })
    assert.deepEqual(JSON.parse(stdout), CONSUMER_OUTPUT)
  })

  it('imports under Deno, from the project’s node_modules', async () => {
    const deno = join(ROOT, 'node_modules', '.bin', 'deno')
    const { stdout } = await exec(deno, ['run', '--node-modules-dir=manual', '--allow-read', '--allow-env', '--allow-net', '--allow-sys', 'consumer.mjs'], { cwd: project, timeout: 60_000 })
    assert.deepEqual(JSON.parse(stdout), CONSUMER_OUTPUT)
  })

  it('resolves its type declarations for a TypeScript consumer (tsc, module nodenext)', async () => {
    const options = { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')] }
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['consumer.ts'] }))
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const run = await exec(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, timeout: 120_000 }).catch((err: { stdout?: string; message: string }) => ({ stdout: err.stdout ?? err.message }))
    assert.equal(run.stdout, '')
  })

  it('resolves its type declarations under Deno (deno check)', async () => {
    const deno = join(ROOT, 'node_modules', '.bin', 'deno')
    const run = await exec(deno, ['check', '--node-modules-dir=manual', 'consumer.ts'], { cwd: project, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } }).catch(
      (err: { stderr?: string; message: string }) => ({ stderr: `failed: ${err.stderr ?? err.message}` }),
    )
    assert.doesNotMatch(run.stderr, /failed|error/i, run.stderr)
  })
})
