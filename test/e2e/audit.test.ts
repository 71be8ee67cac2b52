/**
 * The daemon's audit log as operators read it: `--audit-policy-file` with
 * the log backend, JSON lines with upstream's fields after kubectl's
 * requests, a secret's data never in the log, and a bad policy refused at
 * start-up with its field path; the webhook backend posting batches to an
 * HTTPS receiver named by a kubeconfig.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { execFileSync } from 'node:child_process'
import { BIN, Daemon } from './daemon.js'
import { type AuditReceiver, startAuditReceiver } from '../integration/audit-receiver.js'

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
- level: None
`

describe('the audit log of the daemon', () => {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-audit-'))
  const log = join(dir, 'audit.log')
  let daemon: Daemon

  before(async () => {
    writeFileSync(join(dir, 'policy.yaml'), POLICY)
    daemon = await Daemon.start([`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${log}`])
  })
  after(async () => {
    await daemon?.stop()
  })

  const events = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, any>)

  it('writes one JSON line per kept stage for what kubectl does, with upstream fields', async () => {
    await daemon.ok('create', 'configmap', 'audited', '--from-literal=k=v')
    await daemon.ok('create', 'secret', 'generic', 'hidden', '--from-literal=password=hunter2')
    const all = events()
    const create = all.find((e) => e.verb === 'create' && e.objectRef?.resource === 'configmaps')
    assert.ok(create, JSON.stringify(all))
    assert.equal(create.kind, 'Event')
    assert.equal(create.apiVersion, 'audit.k8s.io/v1')
    assert.equal(create.level, 'RequestResponse')
    assert.equal(create.stage, 'ResponseComplete')
    assert.equal(create.user.username, 'kubernetes-admin')
    assert.match(create.userAgent, /^kubectl/)
    assert.deepEqual(create.sourceIPs, ['127.0.0.1'])
    assert.equal(create.responseStatus.code, 201)
    assert.equal(create.responseObject.data.k, 'v')
    assert.equal(create.objectRef.name, 'audited')
    assert.equal(create.annotations['authorization.k8s.io/decision'], 'allow')
    const secret = all.find((e) => e.verb === 'create' && e.objectRef?.resource === 'secrets')
    assert.equal(secret?.level, 'Metadata')
    assert.doesNotMatch(readFileSync(log, 'utf8'), /hunter2|aHVudGVyMg/)
    assert.equal(all.filter((e) => e.stage === 'RequestReceived').length, 0)
    // A Status answer's fields are kept at Metadata too, as upstream copies them: the delete's Success.
    await daemon.ok('delete', 'secret', 'hidden')
    const deleted = events().find((e) => e.verb === 'delete' && e.objectRef?.resource === 'secrets')
    assert.equal(deleted?.responseStatus.code, 200, JSON.stringify(deleted))
    assert.equal(deleted?.responseStatus.status, 'Success')
    assert.equal(deleted?.responseStatus.details.name, 'hidden')
    // Namespaces are at level None: nothing of them is written.
    await daemon.ok('get', 'namespaces')
    assert.equal(events().filter((e) => e.objectRef?.resource === 'namespaces').length, 0)
  })

  it('refuses to start with a policy that is not valid, naming the field', () => {
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n')
    let stderr = ''
    try {
      execFileSync(process.execPath, [BIN, `--cert-dir=${join(dir, 'pki2')}`, `--audit-policy-file=${join(dir, 'bad.yaml')}`, `--audit-log-path=${log}`], {
        stdio: 'pipe',
        timeout: 30_000,
      })
    } catch (err) {
      stderr = String((err as { stderr?: Buffer }).stderr ?? '')
    }
    assert.match(stderr, /--audit-policy-file: .*rules\[0\]\.level: Unsupported value: "Loud"/s)
  })

  // Upstream opens the file when its options are applied (ensureLogFile): a log that cannot be written stops
  // start-up, where a file opened at the first event dropped every event, each request served unaudited.
  for (const [what, path] of [
    ['under a file', () => join(log, 'sub', 'audit.log')],
    ['under /proc', () => '/proc/no-such-dir/audit.log'],
  ] as const) {
    it(`refuses to start with an audit log path it cannot write (${what}), naming the flag`, () => {
      let stderr = ''
      let code: number | null = 0
      try {
        execFileSync(process.execPath, [BIN, `--cert-dir=${join(dir, 'pki3')}`, `--data-dir=${join(dir, 'data3')}`, '--secure-port=0', '--bind-address=127.0.0.1', `--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${path()}`], {
          stdio: 'pipe',
          timeout: 30_000,
        })
      } catch (err) {
        stderr = String((err as { stderr?: Buffer }).stderr ?? '')
        code = (err as { status?: number | null }).status ?? null
      }
      assert.notEqual(code, 0)
      assert.match(stderr, /--audit-log-path: ensureLogFile: /)
    })
  }
})

describe('the audit webhook of the daemon', () => {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-audit-webhook-'))
  let daemon: Daemon
  let receiver: AuditReceiver

  before(async () => {
    receiver = await startAuditReceiver()
    writeFileSync(join(dir, 'policy.yaml'), POLICY)
    daemon = await Daemon.start([
      `--audit-policy-file=${join(dir, 'policy.yaml')}`,
      `--audit-webhook-config-file=${receiver.kubeconfigFile()}`,
      '--audit-webhook-batch-max-wait=100ms',
    ])
  })
  after(async () => {
    await daemon?.stop()
    await receiver?.stop()
  })

  it('posts EventLists of what kubectl does to the receiver, in batch mode by default', async () => {
    await daemon.ok('create', 'configmap', 'sent-to-hook', '--from-literal=k=v')
    let create: Record<string, any> | undefined
    for (let i = 0; i < 600 && !create; i++) {
      create = receiver.events().find((e) => e['verb'] === 'create' && e['responseObject']?.metadata?.name === 'sent-to-hook')
      if (!create) await new Promise((r) => setTimeout(r, 50))
    }
    assert.ok(create, JSON.stringify(receiver.received))
    assert.equal(create['apiVersion'], 'audit.k8s.io/v1')
    assert.equal(create['user'].username, 'kubernetes-admin')
    assert.match(create['userAgent'], /^kubectl/)
    assert.ok(receiver.received.every((l) => l.body.kind === 'EventList' && l.clientCommonName === 'kube-apiserver-audit'))
  })

  it('refuses to start with a kubeconfig that asks for basic auth, naming the flag', () => {
    const kubeconfig = join(dir, 'basic.kubeconfig')
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${receiver.url}"}}]\nusers: [{name: u, user: {username: a, password: b}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    )
    let stderr = ''
    try {
      execFileSync(process.execPath, [BIN, `--cert-dir=${join(dir, 'pki2')}`, `--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-webhook-config-file=${kubeconfig}`], {
        stdio: 'pipe',
        timeout: 30_000,
      })
    } catch (err) {
      stderr = String((err as { stderr?: Buffer }).stderr ?? '')
    }
    assert.match(stderr, /--audit-webhook-config-file: basic auth, impersonation and proxies are not supported/)
  })
})
