/**
 * The daemon under shutdown and overload, with real clients: SIGTERM with
 * an open watch and a slow request (readyz red during the delay, 429 while
 * draining, exit 0), 429s from each in-flight pool for an ordinary user
 * while the admin passes, a request past --request-timeout, and the
 * profiling endpoints on the port and on the debug socket.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import type { ClientRequest } from 'node:http'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { decodePprof } from '../helpers/pprof.js'
import { Daemon, eventually } from './daemon.js'

interface Answer {
  status: number
  headers: Record<string, unknown>
  body: string
}

interface Call {
  method?: string
  token?: string
  body?: string
  /** Leaves the body open: the request stays in flight until `finish` is called. */
  hold?: boolean
  /** Reads nothing of the answer until `resume` is called: a long answer then waits on the socket. */
  paused?: boolean
}

/** One HTTPS request to the daemon as the admin (its client certificate) or as a token user. */
function call(daemon: Daemon, path: string, opts: Call = {}): { answer: Promise<Answer>; finish: () => void; resume: () => void } {
  const pki = daemon.certDir
  let req: ClientRequest | undefined
  let resume = (): void => {}
  const answer = new Promise<Answer>((resolve, reject) => {
    req = request(
      {
        host: '127.0.0.1',
        port: daemon.port,
        path,
        method: opts.method ?? 'GET',
        ca: readFileSync(join(pki, 'ca.crt')),
        agent: false,
        headers: { 'content-type': 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
        ...(opts.token ? {} : { cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) }),
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
        if (opts.paused) {
          res.pause()
          resume = () => void res.resume()
        }
      },
    )
    req.once('error', reject)
  })
  if (opts.hold) {
    req?.flushHeaders()
    req?.write((opts.body ?? '').slice(0, 10))
  } else req?.end(opts.body)
  return { answer, finish: () => req?.end((opts.body ?? '').slice(10)), resume: () => resume() }
}

const configMap = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } })
const CM = '/api/v1/namespaces/default/configmaps'

function tokenFile(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-tokens-'))
  const path = join(dir, 'tokens.csv')
  writeFileSync(path, 'user-token,jane,1001,dev\n')
  return { dir, path }
}

describe('daemon shutdown phases', () => {
  it('keeps serving with /readyz red during the delay, answers 429 while a slow request finishes, ends the watch and exits 0', async () => {
    const daemon = await Daemon.start(['--shutdown-delay-duration=3s', '--shutdown-send-retry-after=true', '--shutdown-watch-termination-grace-period=2s'])
    const watch = daemon.kubectlStream('get', 'configmaps', '-w', '-o', 'name')
    await daemon.ok('create', 'configmap', 'before-shutdown')
    await eventually(() => assert.match(watch.output(), /configmap\/before-shutdown/))
    const exited = new Promise<number | null>((resolve) => daemon.process.once('exit', (code) => resolve(code)))
    const watchEnded = new Promise<void>((resolve) => watch.child.once('exit', () => resolve()))

    // An ordinary request in flight across the shutdown: a create whose body is still on its way.
    // (A CPU profile is long-running, as upstream counts it, and shutdown does not wait for it.)
    const slow = call(daemon, CM, { method: 'POST', body: configMap('in-flight'), hold: true })
    await eventually(async () => assert.match(await daemon.ok('get', '--raw', '/metrics'), /apiserver_current_inflight_requests\{request_kind="mutating"\} 1/))
    daemon.process.kill('SIGTERM')
    // The signal reaches the daemon's event loop beside the connections it serves: a request read in the same turn may
    // still find it ready. Within the 3 s delay /readyz turns red and stays red while everything else is served.
    await eventually(async () => assert.notEqual((await daemon.kubectl('get', '--raw', '/readyz?verbose')).code, 0), 2000)
    assert.equal(await daemon.ok('get', '--raw', '/healthz'), 'ok')
    assert.equal(await daemon.ok('get', '--raw', '/livez'), 'ok')
    await daemon.ok('create', 'configmap', 'during-delay')

    let refused: Answer | undefined
    await eventually(async () => {
      refused = await call(daemon, CM, { method: 'POST', body: configMap('while-draining') }).answer
      assert.equal(refused.status, 429)
    }, 8000)
    assert.equal(refused?.headers['retry-after'], '5')
    assert.equal(refused?.headers.connection, 'close')
    assert.equal(refused?.headers['content-type'], 'text/plain; charset=utf-8')
    assert.equal(refused?.body, 'The apiserver is shutting down, please try again later.\n')

    slow.finish()
    const finished = await slow.answer
    assert.equal(finished.status, 201, 'the request in flight finished')
    assert.equal(JSON.parse(finished.body).metadata.name, 'in-flight')
    await watchEnded
    assert.equal(await exited, 0)
    assert.match(daemon.logs.join(''), /shutting down/)
    await daemon.stop()
  })

  it('exits at once on a second SIGTERM', async () => {
    const daemon = await Daemon.start(['--shutdown-delay-duration=60s'])
    const exited = new Promise<number | null>((resolve) => daemon.process.once('exit', (code) => resolve(code)))
    daemon.process.kill('SIGTERM')
    await eventually(async () => assert.notEqual((await daemon.kubectl('get', '--raw', '/readyz')).code, 0))
    daemon.process.kill('SIGTERM')
    assert.equal(await exited, 1)
    await daemon.stop()
  })
})

describe('daemon in-flight limits and time-out', () => {
  it('refuses an ordinary user with 429 from each full pool while the admin passes, and times out a long request', async () => {
    const tokens = tokenFile()
    const daemon = await Daemon.start([
      '--enable-priority-and-fairness=false',
      '--max-requests-inflight=1',
      '--max-mutating-requests-inflight=1',
      `--token-auth-file=${tokens.path}`,
      '--request-timeout=3s',
    ])
    try {
      // The read pool: a long list its client does not read holds its one slot, counted until the answer is sent
      // (some 5 MB of ConfigMaps, more than the sockets buffer). A CPU profile, long-running as upstream counts
      // it, takes no slot (below).
      const payload = 'x'.repeat(8 * 1024)
      await Promise.all(
        Array.from({ length: 16 }, async (_, worker) => {
          for (let i = worker; i < 600; i += 16) {
            const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { payload } })
            assert.equal((await call(daemon, CM, { method: 'POST', body }).answer).status, 201)
          }
        }),
      )
      const unread = call(daemon, CM, { paused: true })
      await eventually(async () => assert.equal((await call(daemon, CM, { token: 'user-token' }).answer).status, 429))
      const refused = await call(daemon, CM, { token: 'user-token' }).answer
      assert.equal(refused.headers['retry-after'], '1')
      assert.equal(refused.body, 'Too many requests, please try again later.\n')
      await daemon.ok('get', 'configmap', 'big-0')
      unread.resume()
      assert.equal((await unread.answer).status, 200)
      await eventually(async () => assert.equal((await call(daemon, `${CM}?limit=1`, { token: 'user-token' }).answer).status, 200, 'the slot is free again'))

      // The write pool: a create whose body is still on its way holds its one slot.
      const slowWrite = call(daemon, CM, { method: 'POST', body: configMap('slow-write'), hold: true })
      await eventually(async () => assert.equal((await call(daemon, CM, { method: 'POST', token: 'user-token', body: configMap('refused') }).answer).status, 429))
      await daemon.ok('create', 'configmap', 'admin-write')
      slowWrite.finish()
      assert.equal((await slowWrite.answer).status, 201)
      assert.equal((await daemon.kubectl('get', 'configmap', 'refused')).code, 1, 'the refused write stored nothing')

      // A request past --request-timeout: a create whose body does not come in time.
      const stalled = call(daemon, CM, { method: 'POST', body: configMap('too-late'), hold: true })
      const late = await stalled.answer
      assert.equal(late.status, 504)
      assert.equal(JSON.parse(late.body).reason, 'Timeout')
      stalled.finish()
      assert.equal((await daemon.kubectl('get', 'configmap', 'too-late')).code, 1, 'the timed-out create stored nothing')

      // A CPU profile runs past --request-timeout, long-running as upstream counts it, and holds no read slot.
      const profile = call(daemon, '/debug/pprof/profile?seconds=4')
      assert.equal((await call(daemon, CM, { token: 'user-token' }).answer).status, 200, 'the profile holds no slot')
      const profiled = await profile.answer
      assert.equal(profiled.status, 200)
      assert.equal(profiled.headers['content-disposition'], 'attachment; filename="profile"')
    } finally {
      await daemon.stop()
      rmSync(tokens.dir, { recursive: true, force: true })
    }
  })
})

describe('daemon profiling', () => {
  it('serves /debug/pprof/ to the admin, refuses an ordinary user, and serves the debug socket without credentials', async () => {
    const tokens = tokenFile()
    const socket = join(tokens.dir, 'debug.sock')
    // A policy that allows jane nothing: /debug/pprof/ is for the admin (system:masters) alone.
    const policy = join(tokens.dir, 'policy.jsonl')
    writeFileSync(policy, '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"someone-else","nonResourcePath":"*"}}\n')
    const daemon = await Daemon.start([
      `--token-auth-file=${tokens.path}`,
      '--authorization-mode=ABAC',
      `--authorization-policy-file=${policy}`,
      `--debug-socket-path=${socket}`,
    ])
    try {
      const index = await call(daemon, '/debug/pprof/').answer
      assert.equal(index.status, 200)
      assert.match(index.body, /heap/)
      assert.equal((await call(daemon, '/debug/pprof/heap', { token: 'user-token' }).answer).status, 403)
      const heap = await new Promise<Buffer>((resolve, reject) =>
        execFile('curl', ['-s', '--unix-socket', socket, 'http://localhost/debug/pprof/heap'], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 }, (err, stdout) =>
          err ? reject(err) : resolve(stdout),
        ),
      )
      assert.deepEqual(decodePprof(heap).sampleTypes, [{ type: 'inuse_space', unit: 'bytes' }], 'a pprof heap profile')
    } finally {
      await daemon.stop()
      rmSync(tokens.dir, { recursive: true, force: true })
    }
  })
})

describe('daemon priority and fairness', () => {
  it('lists upstream\'s flow schemas, names them in each answer, and refuses a full Reject level with 429 while the admin passes', async () => {
    const tokens = tokenFile()
    const daemon = await Daemon.start(['--max-requests-inflight=1', '--max-mutating-requests-inflight=1', `--token-auth-file=${tokens.path}`])
    try {
      const names = await daemon.ok('get', 'flowschemas', '-o', 'jsonpath={.items[*].metadata.name}')
      assert.match(names, /\bexempt\b.*\bglobal-default\b/s)
      const answer = await call(daemon, CM, { token: 'user-token' }).answer
      const globalDefault = await daemon.ok('get', 'flowschema', 'global-default', '-o', 'jsonpath={.metadata.uid}')
      assert.equal(answer.headers['x-kubernetes-pf-flowschema-uid'], globalDefault)

      // jane's requests go to a level of one seat that rejects rather than queues.
      const level = { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'jane-level' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } }
      const rule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }
      const schema = { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name: 'jane' }, spec: { priorityLevelConfiguration: { name: 'jane-level' }, matchingPrecedence: 50, rules: [{ subjects: [{ kind: 'User', user: { name: 'jane' } }], resourceRules: [rule] }] } }
      const file = join(tokens.dir, 'apf.json')
      writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [level, schema] }))
      await daemon.ok('apply', '-f', file)
      const janeUid = await daemon.ok('get', 'flowschema', 'jane', '-o', 'jsonpath={.metadata.uid}')
      await eventually(async () => assert.equal((await call(daemon, CM, { token: 'user-token' }).answer).headers['x-kubernetes-pf-flowschema-uid'], janeUid))

      // A create whose body is still on its way holds jane's one seat.
      const slowWrite = call(daemon, CM, { method: 'POST', token: 'user-token', body: configMap('slow-write'), hold: true })
      await eventually(async () => assert.equal((await call(daemon, CM, { token: 'user-token' }).answer).status, 429))
      await daemon.ok('get', 'configmaps')
      slowWrite.finish()
      assert.equal((await slowWrite.answer).status, 201)
      assert.equal((await call(daemon, CM, { token: 'user-token' }).answer).status, 200, 'the seat is free again')
    } finally {
      await daemon.stop()
      rmSync(tokens.dir, { recursive: true, force: true })
    }
  })
})
