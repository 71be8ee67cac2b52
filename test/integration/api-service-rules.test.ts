/**
 * APIServices are checked as upstream's aggregator checks them: named
 * `<version>.<group>` after their spec, priorities within range, TLS
 * settings only for a proxied API, a service with a namespace, a name and
 * a valid port (443 when none is given). Through `status`, only the
 * conditions are checked. Each refusal is a 422 with upstream's message
 * and leaves nothing stored.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const API_SERVICES = '/apis/apiregistration.k8s.io/v1/apiservices'
const MERGE = 'application/merge-patch+json'
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

let api: TestClient

before(async () => {
  api = await startServer()
})

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

const spec = (group: string, more: Record<string, unknown> = {}) => ({ group, version: 'v1', groupPriorityMinimum: 100, versionPriority: 10, ...more })
const apiService = (name: string, group: string, more: Record<string, unknown> = {}) => ({ metadata: { name }, spec: spec(group, more) })

async function refused(name: string, body: unknown, expected: string[]): Promise<void> {
  const res = await api.post(API_SERVICES, body)
  assert.equal(res.status, 422, res.text)
  assert.deepEqual(causes(res.body), expected)
  assert.equal((await api.get(`${API_SERVICES}/${name}`)).status, 404, `${name} was stored`)
}

describe('creating an APIService', () => {
  it('takes a local one and a proxied one, whose port defaults to 443', async () => {
    assert.equal((await api.post(API_SERVICES, apiService('v1.local.example.com', 'local.example.com'))).status, 201)
    const proxied = await api.post(API_SERVICES, apiService('v1.proxied.example.com', 'proxied.example.com', { service: { namespace: 'default', name: 'api' } }))
    assert.equal(proxied.status, 201, proxied.text)
    assert.deepEqual(proxied.body.spec.service, { namespace: 'default', name: 'api', port: 443 })
  })

  it('marks a local one Available as it is created, drops a status sent with a proxied one', async () => {
    const sent = { conditions: [{ type: 'Available', status: 'False', reason: 'Made', message: 'up', lastTransitionTime: '2020-01-01T00:00:00Z' }] }
    const local = (await api.post(API_SERVICES, { ...apiService('v1.fresh.example.com', 'fresh.example.com'), status: sent })).body
    assert.equal(local.status.conditions.length, 1)
    assert.deepEqual(
      { ...local.status.conditions[0], lastTransitionTime: undefined },
      { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available', lastTransitionTime: undefined },
    )
    assert.match(local.status.conditions[0].lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    const proxied = await api.post(API_SERVICES, { ...apiService('v1.away.example.com', 'away.example.com', { service: { namespace: 'default', name: 'api' } }), status: sent })
    assert.deepEqual(proxied.body.status ?? {}, {})
  })

  it('wants the name its spec gives, the generated one too', async () => {
    await refused('Bad_Name', apiService('Bad_Name', 'named.example.com'), [
      'metadata.name: Invalid value: "Bad_Name": must be `spec.version+"."+spec.group`: "v1.named.example.com"',
    ])
    const generated = await api.post(API_SERVICES, { metadata: { generateName: 'v1.named.' }, spec: spec('named.example.com') })
    assert.equal(generated.status, 422)
    const [first, second] = causes(generated.body)
    assert.equal(first, 'metadata.generateName: Invalid value: "v1.named.": must be `spec.version+"."+spec.group`: "v1.named.example.com"')
    assert.match(second ?? '', /^metadata\.name: Invalid value: "v1\.named\.[a-z0-9]{5}": must be `spec\.version\+"\."\+spec\.group`: "v1\.named\.example\.com"$/)
  })

  it('wants a group (but for the core v1), a version and priorities in range', async () => {
    await refused('v1.example.com', { metadata: { name: 'v1.example.com' }, spec: {} }, [
      'metadata.name: Invalid value: "v1.example.com": must be `spec.version+"."+spec.group`: "."',
      'spec.group: Required value: only v1 may have an empty group and it better be legacy kube',
      `spec.version: Invalid value: "": ${DNS1035}`,
      'spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000',
      'spec.versionPriority: Invalid value: 0: must be positive and less than 1000',
    ])
    await refused('V1.Odd_Group', { metadata: { name: 'V1.Odd_Group' }, spec: { ...spec('Odd_Group'), version: 'V1' } }, [
      'spec.group: Invalid value: "Odd_Group": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
      `spec.version: Invalid value: "V1": ${DNS1035}`,
    ])
    await refused('v1.high.example.com', apiService('v1.high.example.com', 'high.example.com', { groupPriorityMinimum: 20001, versionPriority: 1001 }), [
      'spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000',
      'spec.versionPriority: Invalid value: 1001: must be positive and less than 1000',
    ])
    const highest = await api.post(API_SERVICES, apiService('v1.highest.example.com', 'highest.example.com', { groupPriorityMinimum: 20000, versionPriority: 1000 }))
    assert.equal(highest.status, 201, highest.text)
  })

  it('keeps TLS settings to proxied APIs, and a service whole', async () => {
    await refused('v1.tls.example.com', apiService('v1.tls.example.com', 'tls.example.com', { caBundle: btoa('abc'), insecureSkipTLSVerify: true }), [
      'spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle',
      'spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify',
    ])
    await refused('v1.svc.example.com', apiService('v1.svc.example.com', 'svc.example.com', { service: { port: 0 }, caBundle: btoa('abc'), insecureSkipTLSVerify: true }), [
      'spec.service.namespace: Required value',
      'spec.service.name: Required value',
      'spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
      'spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present',
    ])
  })
})

describe('updating an APIService', () => {
  it('meets the same rules: a changed group no longer fits the name', async () => {
    assert.equal((await api.post(API_SERVICES, apiService('v1.moving.example.com', 'moving.example.com'))).status, 201)
    const moved = await api.update(`${API_SERVICES}/v1.moving.example.com`, (current) => ({ ...current, spec: { ...current.spec, group: 'elsewhere.example.com' } }))
    assert.equal(moved.status, 422)
    assert.deepEqual(causes(moved.body), [
      'metadata.name: Invalid value: "v1.moving.example.com": must be `spec.version+"."+spec.group`: "v1.elsewhere.example.com"',
    ])
    assert.equal((await api.get(`${API_SERVICES}/v1.moving.example.com`)).body.spec.group, 'moving.example.com')
  })

  it('checks only the conditions through status', async () => {
    assert.equal((await api.post(API_SERVICES, apiService('v1.status.example.com', 'status.example.com'))).status, 201)
    const odd = await api.patch(`${API_SERVICES}/v1.status.example.com/status`, { status: { conditions: [{ type: 'Available', status: 'Maybe' }] } }, MERGE)
    assert.equal(odd.status, 422)
    assert.deepEqual(causes(odd.body), ['status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"'])
  })
})
