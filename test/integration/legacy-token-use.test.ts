/**
 * The use of a legacy (secret-based) service-account token, tracked as
 * upstream tracks it: its Secret labelled with the day it was last used (one
 * write a day), the request's audit event annotated with the Secret's name
 * (auto-generated: the service account lists it; else manual), a warning for
 * an auto-generated one, and the serviceaccount_legacy_* counters.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { AuditPolicy } from '../../core/audit/types.js'
import { silentLogger } from '../../core/logging/logger.js'
import { parseCommandLine } from '../../core/options/flags/index.js'
import { auditOptions } from '../../runtimes/node/daemon/audit.js'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js'
import { eventually } from './harness.js'
import { create, ecKeyPem, legacyToken as signLegacyToken, network, type TokenServer, tokenServer } from './service-account-fixtures.js'

const LAST_USED = 'kubernetes.io/legacy-token-last-used'
const WARNING = '299 - "Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens."'
const SECRETS = '/api/v1/namespaces/default/secrets'
const POLICY: AuditPolicy = { omitStages: ['RequestReceived'], rules: [{ level: 'None', resources: [{ group: '', resources: ['secrets'] }] }, { level: 'Metadata' }] }
const b64 = (text: string): string => Buffer.from(text).toString('base64')
const utcDay = (at: Date): string => at.toISOString().slice(0, 10)

describe('legacy service-account token use', () => {
  const key = ecKeyPem()
  const dir = mkdtempSync(join(tmpdir(), 'legacy-use-'))
  const logPath = join(dir, 'audit.log')
  let s: TokenServer
  let uid: string

  before(async () => {
    const command = parseCommandLine([`--audit-log-path=${logPath}`])
    if (command.action !== 'run') assert.fail(`expected run, got ${command.action}`)
    const audit = auditOptions(command.flags, POLICY, undefined, silentLogger)
    s = await tokenServer({ audit, authentication: { serviceAccounts: { signingKey: key.privateKey } } })
    uid = (await s.api.get('/api/v1/namespaces/default/serviceaccounts/default')).body.metadata.uid
  })
  after(async () => {
    await s.shutdown()
    rmSync(dir, { recursive: true, force: true })
  })

  const legacyToken = (secretName: string): Promise<string> => signLegacyToken(s.api, key.privateKey, secretName, uid)

  /** A Secret holding a legacy token; `listed`: the service account lists it, as the token controller did for the ones it made. */
  async function tokenSecret(name: string, options: { listed?: boolean; labels?: Record<string, string> } = {}): Promise<string> {
    const token = await legacyToken(name)
    await create(s.api, SECRETS, {
      metadata: { name, labels: options.labels ?? {}, annotations: { 'kubernetes.io/service-account.name': 'default', 'kubernetes.io/service-account.uid': uid } },
      type: 'kubernetes.io/service-account-token',
      data: { token: b64(token) },
    })
    if (options.listed) {
      const r = await s.api.update('/api/v1/namespaces/default/serviceaccounts/default', (sa) => ({ ...sa, secrets: [...(sa.secrets ?? []), { name }] }))
      assert.equal(r.status, 200, r.text)
    }
    return token
  }

  const asBearer = (token: string) => ({ connection: network, headers: { authorization: `Bearer ${token}` } })
  const secret = async (name: string) => (await s.api.get(`${SECRETS}/${name}`)).body
  const counters = async (): Promise<Record<string, number | undefined>> => {
    const families = parsePrometheusText((await s.api.get('/metrics')).text)
    const names = ['legacy_tokens_total', 'legacy_auto_token_uses_total', 'legacy_manual_token_uses_total', 'invalid_legacy_auto_token_uses_total']
    return Object.fromEntries(names.map((n) => [n, sampleValue(families, `serviceaccount_${n}`)]))
  }

  /** The ResponseComplete (or, refused, ResponseStarted) event of a request in the audit log. */
  async function auditEvent(auditId: string | null): Promise<Record<string, any>> {
    assert.ok(auditId)
    let found: Record<string, any> | undefined
    await eventually(`the audit log has the event of ${auditId}`, async () => {
      let text = ''
      try {
        text = readFileSync(logPath, 'utf8')
      } catch {
        return false
      }
      found = text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, any>)
        .find((e) => e['auditID'] === auditId)
      return found !== undefined
    })
    return found!
  }

  it('counts its counters from the start, at zero', async () => {
    assert.deepEqual(await counters(), { legacy_tokens_total: 0, legacy_auto_token_uses_total: 0, legacy_manual_token_uses_total: 0, invalid_legacy_auto_token_uses_total: 0 })
  })

  it('labels a manual token’s Secret with the day, once a day, annotates the request and warns of nothing', async () => {
    const token = await tokenSecret('manual-token')
    const before = await counters()
    const first = await s.api.get('/api/v1/namespaces/default/configmaps', asBearer(token))
    assert.equal(first.status, 200, first.text)
    assert.equal(first.headers.get('warning'), null)
    const labelled = await secret('manual-token')
    assert.equal(labelled.metadata.labels[LAST_USED], utcDay(s.now()))

    const event = await auditEvent(first.headers.get('audit-id'))
    assert.equal(event['user'].username, 'system:serviceaccount:default:default')
    assert.equal(event['annotations']['authentication.k8s.io/legacy-token-manual-secret'], 'manual-token')
    assert.equal(event['annotations']['authentication.k8s.io/legacy-token'], 'system:serviceaccount:default:default')
    assert.equal(event['annotations']['authentication.k8s.io/legacy-token-autogenerated-secret'], undefined)

    // The same day, the label is there: nothing is written.
    assert.equal((await s.api.get('/api/v1/namespaces/default/configmaps', asBearer(token))).status, 200)
    assert.equal((await secret('manual-token')).metadata.resourceVersion, labelled.metadata.resourceVersion)
    // The second use came within the token cache's ten seconds: counted once, as upstream counts a lookup.
    const after = await counters()
    assert.equal(after['legacy_tokens_total']! - before['legacy_tokens_total']!, 1)
    assert.equal(after['legacy_manual_token_uses_total']! - before['legacy_manual_token_uses_total']!, 1)
    assert.equal(after['legacy_auto_token_uses_total'], before['legacy_auto_token_uses_total'])
    s.advance(11_000)
    assert.equal((await s.api.get('/api/v1/namespaces/default/configmaps', asBearer(token))).status, 200)
    assert.equal((await counters())['legacy_manual_token_uses_total']! - before['legacy_manual_token_uses_total']!, 2)

    // The next day, the label is written again.
    s.advance(24 * 60 * 60 * 1000)
    assert.equal((await s.api.get('/api/v1/namespaces/default/configmaps', asBearer(token))).status, 200)
    assert.equal((await secret('manual-token')).metadata.labels[LAST_USED], utcDay(s.now()))
  })

  it('warns the user of an auto-generated token, on every answer, and annotates the request with its Secret', async () => {
    const token = await tokenSecret('auto-token', { listed: true })
    const before = await counters()
    const r = await s.api.get('/api/v1/namespaces/default/configmaps', asBearer(token))
    assert.equal(r.status, 200, r.text)
    assert.equal(r.headers.get('warning'), WARNING)
    const event = await auditEvent(r.headers.get('audit-id'))
    assert.equal(event['annotations']['authentication.k8s.io/legacy-token-autogenerated-secret'], 'auto-token')
    assert.equal(event['annotations']['authentication.k8s.io/legacy-token-manual-secret'], undefined)
    assert.equal((await secret('auto-token')).metadata.labels[LAST_USED], utcDay(s.now()))

    // An answer no resource handler makes carries it too, and one warning of a kind is written once.
    const version = await s.api.get('/version', asBearer(token))
    assert.equal(version.status, 200)
    assert.equal(version.headers.get('warning'), WARNING)
    const missing = await s.api.get('/api/v1/namespaces/default/nothings', asBearer(token))
    assert.equal(missing.status, 404)
    assert.equal(missing.headers.get('warning'), WARNING)
    // Each answer warns, and the audit annotations are there, though the token cache looked the token up once.
    const versionEvent = await auditEvent(version.headers.get('audit-id'))
    assert.equal(versionEvent['annotations']['authentication.k8s.io/legacy-token-autogenerated-secret'], 'auto-token')
    const after = await counters()
    assert.equal(after['legacy_auto_token_uses_total']! - before['legacy_auto_token_uses_total']!, 1)
    assert.equal(after['legacy_manual_token_uses_total'], before['legacy_manual_token_uses_total'])
  })

  it('tracks a refused use of a token marked invalid: annotated, counted, labelled, and still a 401', async () => {
    const token = await tokenSecret('invalid-token', { listed: true, labels: { 'kubernetes.io/legacy-token-invalid-since': '2020-01-01' } })
    const before = await counters()
    const r = await s.api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'by-invalid' } }, asBearer(token))
    assert.equal(r.status, 401, r.text)
    assert.equal(r.headers.get('warning'), null)
    assert.equal((await s.api.get('/api/v1/namespaces/default/configmaps/by-invalid')).status, 404)
    const event = await auditEvent(r.headers.get('audit-id'))
    assert.equal(event['responseStatus'].code, 401)
    assert.equal(event['annotations']['authentication.k8s.io/legacy-token-invalidated'], 'invalid-token/default')
    assert.equal((await secret('invalid-token')).metadata.labels[LAST_USED], utcDay(s.now()))
    const after = await counters()
    assert.equal(after['invalid_legacy_auto_token_uses_total']! - before['invalid_legacy_auto_token_uses_total']!, 1)
    assert.equal(after['legacy_auto_token_uses_total'], before['legacy_auto_token_uses_total'])
  })

  it('tracks a TokenReview of a legacy token as a use, on the review’s own answer', async () => {
    const token = await tokenSecret('reviewed-token', { listed: true })
    const r = await s.api.post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } })
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.status.authenticated, true)
    assert.equal(r.headers.get('warning'), WARNING)
    assert.equal((await auditEvent(r.headers.get('audit-id')))['annotations']['authentication.k8s.io/legacy-token-autogenerated-secret'], 'reviewed-token')
    assert.equal((await secret('reviewed-token')).metadata.labels[LAST_USED], utcDay(s.now()))
  })
})
