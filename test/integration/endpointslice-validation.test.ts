/**
 * EndpointSlices are validated as upstream validates them: a slice naming
 * an address no peer has (the node itself, its metadata service, nothing)
 * or an address not of its type is a 422 with upstream's message and is not
 * stored; valid IPv4, IPv6 and FQDN slices are; the address type stays as
 * created.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices'
const KIND = 'EndpointSlice.discovery.k8s.io'
const DNS_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const DNS_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

let api: TestClient

before(async () => {
  // No admission plugins and no controllers: what is checked here is validation alone.
  api = await startServer({ admission: { plugins: [] } })
})

interface Slice {
  metadata: { name: string }
  addressType?: string
  endpoints: Record<string, unknown>[]
  ports?: Record<string, unknown>[]
}

const slice = (name: string, addressType: string, addresses: string[], extra: Record<string, unknown> = {}): Slice => ({
  metadata: { name },
  addressType,
  endpoints: [{ addresses, conditions: { ready: true }, ...extra }],
  ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
})

/** Posts `body`, expects 422 with `errors` (one, or the bracketed list), and nothing stored under its name. */
async function refused(body: Slice, errors: string | string[]): Promise<void> {
  const res = await api.post(SLICES, body)
  const list = Array.isArray(errors) ? errors : [errors]
  assert.equal(res.status, 422, res.text)
  assert.equal(res.body.message, `${KIND} "${body.metadata.name}" is invalid: ${list.length === 1 ? list[0] : `[${list.join(', ')}]`}`)
  assert.equal((await api.get(`${SLICES}/${body.metadata.name}`)).status, 404)
}

async function created(body: Slice): Promise<Record<string, unknown>> {
  const res = await api.post(SLICES, body)
  assert.equal(res.status, 201, res.text)
  return res.body
}

describe('EndpointSlice addresses', () => {
  it('refuses the addresses that would send traffic to the node or its metadata service', async () => {
    const at = 'endpoints[0].addresses[0]: Invalid value: '
    await refused(slice('metadata', 'IPv4', ['169.254.169.254']), `${at}"169.254.169.254": may not be in the link-local range (169.254.0.0/16, fe80::/10)`)
    await refused(slice('loopback', 'IPv4', ['127.0.0.1']), `${at}"127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`)
    await refused(slice('loopback-far', 'IPv4', ['127.255.0.9']), `${at}"127.255.0.9": may not be in the loopback range (127.0.0.0/8, ::1/128)`)
    await refused(slice('unspecified', 'IPv4', ['0.0.0.0']), `${at}"0.0.0.0": may not be unspecified (0.0.0.0)`)
    await refused(slice('multicast', 'IPv4', ['224.0.0.251']), `${at}"224.0.0.251": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)`)
    await refused(slice('v6-loopback', 'IPv6', ['::1']), `${at}"::1": may not be in the loopback range (127.0.0.0/8, ::1/128)`)
    await refused(slice('v6-link-local', 'IPv6', ['fe80::1']), `${at}"fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)`)
  })

  it('refuses names and paths where an IP is due, with both of upstream\'s messages', async () => {
    const at = 'endpoints[0].addresses[0]: Invalid value: '
    await refused(slice('localhost', 'IPv4', ['localhost']), [`${at}"localhost": must be a valid IPv4 address`, `${at}"localhost": must be a valid IP address`])
    await refused(slice('path', 'IPv4', ['evil.example/x']), [`${at}"evil.example/x": must be a valid IPv4 address`, `${at}"evil.example/x": must be a valid IP address`])
    // An address of the other family is not one of this slice's.
    await refused(slice('v6-in-v4', 'IPv4', ['2001:db8::1']), `${at}"2001:db8::1": must be a valid IPv4 address`)
    await refused(slice('v4-in-v6', 'IPv6', ['10.0.0.1']), `${at}"10.0.0.1": must be a valid IPv6 address`)
  })

  it('refuses FQDN addresses that are not domain names', async () => {
    const at = 'endpoints[0].addresses[0]: Invalid value: '
    await refused(slice('fqdn-path', 'FQDN', ['evil.example/x']), `${at}"evil.example/x": ${DNS_SUBDOMAIN}`)
    await refused(slice('fqdn-single', 'FQDN', ['localhost']), `${at}"localhost": should be a domain with at least two segments separated by dots`)
  })

  it('stores valid IPv4, IPv6 and FQDN slices', async () => {
    const v4 = await created(slice('v4', 'IPv4', ['10.0.0.1', '192.0.2.7'], { nodeName: 'node-1', hostname: 'web-0', hints: { forZones: [{ name: 'zone-a' }] } }))
    assert.deepEqual((v4['endpoints'] as { addresses: string[] }[])[0]!.addresses, ['10.0.0.1', '192.0.2.7'])
    await created(slice('v6', 'IPv6', ['2001:db8::1']))
    await created(slice('fqdn', 'FQDN', ['backend.example.com', 'api.example.org.']))
    // A port without a name or protocol is unnamed and TCP, as upstream defaults it, not refused.
    const defaulted = await created({ metadata: { name: 'defaulted' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.3'] }], ports: [{ port: 80 }] })
    assert.deepEqual(defaulted['ports'], [{ name: '', port: 80, protocol: 'TCP' }])
    // A headless slice, no endpoints and no ports, is valid.
    await created({ metadata: { name: 'empty' }, addressType: 'IPv4', endpoints: [] })
  })
})

describe('EndpointSlice fields', () => {
  it('requires a known address type', async () => {
    await refused({ ...slice('no-type', 'IPv4', ['10.0.0.1']), addressType: undefined }, 'addressType: Required value')
    await refused(slice('ip-type', 'IP', ['10.0.0.1']), 'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"')
  })

  it('refuses endpoints without addresses and with too many', async () => {
    await refused(slice('no-addresses', 'IPv4', []), 'endpoints[0].addresses: Required value: must contain at least 1 address')
    const many = Array.from({ length: 101 }, (_, i) => `10.0.${i >> 8}.${(i & 0xff) + 1}`)
    await refused(slice('many-addresses', 'IPv4', many), 'endpoints[0].addresses: Too many: 101: must have at most 100 items')
    const endpoints = Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] }))
    await refused({ metadata: { name: 'many-endpoints' }, addressType: 'IPv4', endpoints }, 'endpoints: Too many: 1001: must have at most 1000 items')
  })

  it('checks node names, hostnames and zone hints', async () => {
    await refused(slice('bad-node', 'IPv4', ['10.0.0.1'], { nodeName: 'Node_1' }), `endpoints[0].nodeName: Invalid value: "Node_1": ${DNS_SUBDOMAIN}`)
    await refused(slice('bad-host', 'IPv4', ['10.0.0.1'], { hostname: 'a.b' }), `endpoints[0].hostname: Invalid value: "a.b": ${DNS_LABEL}`)
    const zones = Array.from({ length: 9 }, (_, i) => ({ name: `zone-${i}` }))
    await refused(slice('many-zones', 'IPv4', ['10.0.0.1'], { hints: { forZones: zones } }), 'endpoints[0].hints.forZones: Too many: 9: must have at most 8 items')
    await refused(
      slice('same-zone', 'IPv4', ['10.0.0.1'], { hints: { forZones: [{ name: 'a' }, { name: 'a' }] } }),
      'endpoints[0].hints.forZones[1].name: Duplicate value: "a"',
    )
  })

  it('checks port names, protocols and app protocols', async () => {
    const withPorts = (name: string, ports: Record<string, unknown>[]): Slice => ({ ...slice(name, 'IPv4', ['10.0.0.1']), ports })
    await refused(withPorts('dup-port', [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'http', port: 81, protocol: 'TCP' }]), 'ports[1].name: Duplicate value: "http"')
    await refused(withPorts('bad-port-name', [{ name: 'Web_1', port: 80, protocol: 'TCP' }]), `ports[0].name: Invalid value: "Web_1": ${DNS_LABEL}`)
    await refused(withPorts('bad-protocol', [{ name: 'http', port: 80, protocol: 'ICMP' }]), 'ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"')
    await refused(
      withPorts('bad-app-protocol', [{ name: 'http', port: 80, protocol: 'TCP', appProtocol: 'a/b/c' }]),
      "ports[0].appProtocol: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    )
  })
})

describe('EndpointSlice updates', () => {
  it('keeps the address type as created', async () => {
    const stored = await created(slice('fixed-type', 'IPv4', ['10.0.0.1']))
    const res = await api.put(`${SLICES}/fixed-type`, { ...stored, addressType: 'FQDN', endpoints: [{ addresses: ['web.example.com'] }] })
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.message, `${KIND} "fixed-type" is invalid: addressType: Invalid value: "FQDN": field is immutable`)
    assert.equal((await api.get(`${SLICES}/fixed-type`)).body['addressType'], 'IPv4')
  })

  it('refuses an update that brings in the metadata service, and keeps the stored addresses', async () => {
    const stored = await created(slice('turned', 'IPv4', ['10.0.0.2']))
    const patched = await api.patch(`${SLICES}/turned`, { endpoints: [{ addresses: ['169.254.169.254'] }] }, 'application/merge-patch+json')
    assert.equal(patched.status, 422, patched.text)
    assert.equal(patched.body.message, `${KIND} "turned" is invalid: endpoints[0].addresses[0]: Invalid value: "169.254.169.254": may not be in the link-local range (169.254.0.0/16, fe80::/10)`)
    const now = await api.get(`${SLICES}/turned`)
    assert.deepEqual(now.body['endpoints'], stored['endpoints'])
  })
})
