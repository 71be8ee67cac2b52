/**
 * The daemon's profiles (`--profiling`, on by default, and
 * `--debug-socket-path`) over real clients: each answers a pprof profile
 * that go tool pprof could read, made of stacks and numbers, and none holds
 * a byte of the keys and tokens the daemon keeps in memory. The debug
 * socket is 0600 from the moment it appears.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { type DecodedProfile, decodePprof } from '../helpers/pprof.js'
import { Daemon } from './daemon.js'

interface Fetched {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

/** GET over the debug socket, with no credentials at all. */
function overSocket(socketPath: string, path: string): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.once('error', reject)
    req.end()
  })
}

/** `kubectl get --raw` as the admin, or with `--token`: the bytes it writes. */
function kubectlRaw(daemon: Daemon, path: string, token?: string): Promise<Buffer> {
  const args = ['--kubeconfig', daemon.kubeconfig, 'get', '--raw', path, ...(token ? [`--token=${token}`] : [])]
  return new Promise((resolve, reject) =>
    execFile('kubectl', args, { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, HOME: daemon.dir } }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl get --raw ${path}: ${String(stderr)}`)) : resolve(stdout),
    ),
  )
}

/** A PEM file's secret forms: its base64 body, each line of it, and the DER bytes. */
function pemForms(name: string, pem: string): [string, string | Buffer][] {
  const lines = pem.split('\n').filter((l) => l && !l.startsWith('-----'))
  const body = lines.join('')
  return [
    [`${name} (base64 body)`, body],
    ...lines.filter((l) => l.length >= 32).map((l, i): [string, string] => [`${name} (PEM line ${i + 1})`, l]),
    [`${name} (DER)`, Buffer.from(body, 'base64')],
  ]
}

function assertNoSecrets(what: string, gzipped: Buffer, secrets: [string, string | Buffer][]): void {
  const plain = gunzipSync(gzipped)
  for (const [name, secret] of secrets) assert.equal(plain.indexOf(secret), -1, `${what} holds ${name}`)
}

function assertSensible(what: string, profile: DecodedProfile, kind: 'heap' | 'cpu'): void {
  const types = profile.sampleTypes.map((t) => `${t.type}/${t.unit}`)
  if (kind === 'heap') {
    assert.deepEqual(types, ['inuse_space/bytes'], what)
    assert.deepEqual(profile.periodType, { type: 'space', unit: 'bytes' }, what)
    assert.equal(profile.period, 512 * 1024, what)
  } else {
    assert.deepEqual(types, ['samples/count', 'cpu/nanoseconds'], what)
    assert.deepEqual(profile.periodType, { type: 'cpu', unit: 'nanoseconds' }, what)
    assert.ok(profile.durationNanos >= 1e9, `${what}: a profile of at least the second asked for`)
  }
  assert.ok(profile.samples.length > 0, `${what}: no samples`)
  // A CPU sample's nanoseconds may be 0 (two ticks at one instant); its count and a heap sample's bytes may not.
  assert.ok(profile.samples.every((s) => s.stack.length > 0 && s.values[0]! > 0 && s.values.every((v) => v >= 0)), `${what}: a sample without a stack or a value`)
  assert.ok(profile.timeNanos > Date.UTC(2020, 0) * 1e6, `${what}: time_nanos is not a time`)
}

/**
 * Stores four ConfigMaps of 900 KB each, which the daemon keeps live (its
 * store and watch cache hold them). V8 samples an allocation about every
 * 512 KiB, so a heap profile taken afterwards has a stack with near
 * certainty (a chance of about e^-14 that none is sampled), where a fresh
 * daemon's may by chance have none.
 */
async function holdLiveObjects(daemon: Daemon, dir: string): Promise<void> {
  const file = join(dir, 'live-data')
  writeFileSync(file, randomBytes(450 * 1024).toString('hex'))
  for (let i = 0; i < 4; i++) await daemon.ok('create', 'configmap', `live-${i}`, `--from-file=data=${file}`)
  rmSync(file)
}

describe('daemon profiles', () => {
  it('answers heap, allocs and profile as pprof profiles over HTTPS and the debug socket, with no key, token or encryption key in them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-profiles-'))
    const token = randomBytes(24).toString('hex')
    const tokens = join(dir, 'tokens.csv')
    writeFileSync(tokens, `${token},profiler,profiler-uid,system:masters\n`)
    const aesKey = randomBytes(32)
    const encryption = join(dir, 'encryption.yaml')
    writeFileSync(
      encryption,
      `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: ${aesKey.toString('base64')}
  - identity: {}
`,
    )
    const socket = join(dir, 'debug.sock')
    // Every entry of the directory as it appears: the socket must never be seen with another mode.
    const seen: string[] = []
    const watcher = watch(dir, () => {
      for (const name of readdirSync(dir)) {
        try {
          const st = lstatSync(join(dir, name))
          if (st.isSocket()) seen.push(`${name} ${(st.mode & 0o777).toString(8)}`)
          if (st.isDirectory()) seen.push(`${name}/ ${(st.mode & 0o777).toString(8)}`)
        } catch {
          // Gone between the listing and the stat: the rename moved it.
        }
      }
    })
    const daemon = await Daemon.start([`--token-auth-file=${tokens}`, `--encryption-provider-config=${encryption}`, `--debug-socket-path=${socket}`])
    try {
      watcher.close()
      assert.equal((lstatSync(socket).mode & 0o777).toString(8), '600')
      assert.deepEqual(
        seen.filter((s) => !/ (600|700)$/.test(s)),
        [],
        'the socket or its staging directory was seen open to others',
      )
      assert.deepEqual(readdirSync(dir).sort(), ['debug.sock', 'encryption.yaml', 'tokens.csv'], 'no staging directory is left')

      // The secret is stored through the aescbc key, so the key has been used, not only read.
      await daemon.ok('create', 'secret', 'generic', 'profiled', '--from-literal=password=not-this-one')
      await holdLiveObjects(daemon, dir)
      const pki = daemon.certDir
      const secrets: [string, string | Buffer][] = [
        ...pemForms('the CA key', readFileSync(join(pki, 'ca.key'), 'utf8')),
        ...pemForms('the service-account key', readFileSync(join(pki, 'sa.key'), 'utf8')),
        ...pemForms('the serving key', readFileSync(join(pki, 'apiserver.key'), 'utf8')),
        ['the aescbc key (base64)', aesKey.toString('base64')],
        ['the aescbc key (raw)', aesKey],
        ['the static token', token],
      ]

      for (const name of ['heap', 'allocs']) {
        const https = await kubectlRaw(daemon, `/debug/pprof/${name}`)
        assertNoSecrets(`${name} over HTTPS`, https, secrets)
        assertSensible(`${name} over HTTPS`, decodePprof(https), 'heap')
        const byToken = await kubectlRaw(daemon, `/debug/pprof/${name}?gc=1`, token)
        assertNoSecrets(`${name}?gc=1 with the static token`, byToken, secrets)
        assertSensible(`${name}?gc=1 with the static token`, decodePprof(byToken), 'heap')
        const local = await overSocket(socket, `/debug/pprof/${name}`)
        assert.equal(local.status, 200)
        assert.equal(local.headers['content-type'], 'application/octet-stream')
        assert.equal(local.headers['content-disposition'], `attachment; filename="${name}"`)
        assertNoSecrets(`${name} over the debug socket`, local.body, secrets)
        assertSensible(`${name} over the debug socket`, decodePprof(local.body), 'heap')
      }

      // Requests while the CPU is profiled, so that it has work to sample besides waiting.
      const busy = async (profile: Promise<Buffer>): Promise<Buffer> => {
        let done = false
        void profile.finally(() => (done = true)).catch(() => {})
        while (!done) await daemon.kubectl('get', 'secrets,configmaps,namespaces', '-A')
        return profile
      }
      const cpu = await busy(kubectlRaw(daemon, '/debug/pprof/profile?seconds=1'))
      assertNoSecrets('profile over HTTPS', cpu, secrets)
      assertSensible('profile over HTTPS', decodePprof(cpu), 'cpu')
      const localCpu = await overSocket(socket, '/debug/pprof/profile?seconds=1')
      assert.equal(localCpu.headers['content-disposition'], 'attachment; filename="profile"')
      assertNoSecrets('profile over the debug socket', localCpu.body, secrets)
      const decoded = decodePprof(localCpu.body)
      assert.deepEqual(decoded.sampleTypes.map((t) => t.type), ['samples', 'cpu'])
    } finally {
      watcher.close()
      await daemon.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('answers ?debug=1 as text, and refuses ?seconds on heap and an unknown profile as Go does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-profiles-'))
    const socket = join(dir, 'debug.sock')
    const daemon = await Daemon.start([`--debug-socket-path=${socket}`])
    try {
      await holdLiveObjects(daemon, dir)
      const text = await overSocket(socket, '/debug/pprof/heap?debug=1')
      assert.equal(text.status, 200)
      assert.equal(text.headers['content-type'], 'text/plain; charset=utf-8')
      assert.match(text.body.toString(), /^heap profile: \d+ stacks; inuse_space\/bytes \d+\n/)
      // Which stacks V8 sampled is chance; that frames name a function, a script and a line is not.
      assert.match(text.body.toString(), /\n\d+ @\n#\t/)
      // The script is the server's file or one of Node's own (node:internal/...), as the sampled stack happens to end.
      assert.match(text.body.toString(), /\n#\t[^\n]+ (?:\/\S+\.c?js|node:\S+):\d+:\d+\n/)

      const delta = await overSocket(socket, '/debug/pprof/heap?seconds=5')
      assert.equal(delta.status, 400)
      assert.equal(delta.body.toString(), '"seconds" parameter is not supported for this profile type\n')
      const bad = await overSocket(socket, '/debug/pprof/allocs?seconds=x')
      assert.equal(bad.status, 400)
      assert.equal(bad.body.toString(), 'invalid value for "seconds" - must be a positive integer\n')
      const unknown = await overSocket(socket, '/debug/pprof/goroutine')
      assert.equal(unknown.status, 404)
      assert.equal(unknown.body.toString(), 'Unknown profile\n')
      const index = await overSocket(socket, '/debug/pprof/')
      assert.doesNotMatch(index.body.toString(), /snapshot/i)
      assert.match(index.body.toString(), /href="allocs"/)
    } finally {
      await daemon.stop()
    }
    assert.deepEqual(readdirSync(dir), [], 'the socket file is removed at shutdown')
    rmSync(dir, { recursive: true, force: true })
  })
})
