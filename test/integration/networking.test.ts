/** networking.k8s.io through the API: defaults on create, refusals with upstream's causes, immutable fields, delete. */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const BASE = '/apis/networking.k8s.io/v1'
const INGRESSES = `${BASE}/namespaces/default/ingresses`
const POLICIES = `${BASE}/namespaces/default/networkpolicies`
const CLASSES = `${BASE}/ingressclasses`
const IPS = `${BASE}/ipaddresses`
const CIDRS = `${BASE}/servicecidrs`

const causes = (body: { details: { causes: { field: string; message: string }[] } }): string[] =>
  body.details.causes.map((c) => `${c.field}: ${c.message}`)

const backend = { service: { name: 'web', port: { number: 80 } } }

describe('networking.k8s.io through the API', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  it('creates an ingress with an empty load balancer status, updates it, and deletes it', async () => {
    const body = {
      metadata: { name: 'web' },
      spec: { rules: [{ host: '*.example.com', http: { paths: [{ path: '/api', pathType: 'Prefix', backend }] } }] },
      status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
    }
    assert.equal((await client.post(INGRESSES, body)).status, 201)
    const read = await client.get(`${INGRESSES}/web`)
    assert.deepEqual(read.body.status, { loadBalancer: {} })
    read.body.spec.rules[0].http.paths[0].path = '/v2'
    const updated = await client.put(`${INGRESSES}/web`, read.body)
    assert.equal(updated.status, 200, updated.text)
    assert.equal(updated.body.metadata.generation, 2)
    read.body.spec.rules[0].http.paths[0].path = 'v3'
    const refused = await client.put(`${INGRESSES}/web`, { ...read.body, metadata: updated.body.metadata })
    assert.equal(refused.status, 422)
    assert.deepEqual(causes(refused.body), ['spec.rules[0].http.paths[0].path: Invalid value: "v3": must be an absolute path'])
    assert.equal((await client.delete(`${INGRESSES}/web`)).status, 200)
    assert.equal((await client.get(`${INGRESSES}/web`)).status, 404)
  })

  it('refuses an invalid ingress with every cause, and stores nothing', async () => {
    const res = await client.post(INGRESSES, {
      metadata: { name: 'bad', annotations: { 'kubernetes.io/ingress.class': 'nginx' } },
      spec: {
        ingressClassName: 'other',
        rules: [
          {
            host: '10.0.0.1',
            http: {
              paths: [
                { path: '/a//b', pathType: 'Exact', backend: { service: { name: 'web', port: { name: 'http', number: 80 } } } },
                { path: '/', backend },
                { path: '/', pathType: 'Prefix', backend: {} },
              ],
            },
          },
        ],
        tls: [{ hosts: ['*.*.example.com'] }],
      },
    })
    assert.equal(res.status, 422)
    assert.deepEqual(causes(res.body), [
      'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
      "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b\": must not contain '//'",
      'spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number',
      'spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified',
      'spec.rules[0].http.paths[2].backend: Invalid value: "": resource or service backend is required',
      "spec.tls[0].hosts[0]: Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'annotations.kubernetes.io/ingress.class: Invalid value: "nginx": must match `ingressClassName` when both are specified',
    ])
    assert.equal((await client.get(`${INGRESSES}/bad`)).status, 404)
    const empty = await client.post(INGRESSES, { metadata: { name: 'empty' }, spec: {} })
    assert.deepEqual(causes(empty.body), ['spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified'])
  })

  it('defaults an ingress class parameters scope, and keeps its controller immutable', async () => {
    const body = { metadata: { name: 'nginx' }, spec: { controller: 'example.com/ingress', parameters: { kind: 'Config', name: 'cfg' } } }
    assert.equal((await client.post(CLASSES, body)).status, 201)
    const read = await client.get(`${CLASSES}/nginx`)
    assert.deepEqual(read.body.spec.parameters, { kind: 'Config', name: 'cfg', scope: 'Cluster' })
    const changed = await client.put(`${CLASSES}/nginx`, { ...read.body, spec: { ...read.body.spec, controller: 'example.com/other' } })
    assert.equal(changed.status, 422)
    assert.deepEqual(causes(changed.body), ['spec.controller: Invalid value: "example.com/other": field is immutable'])
    const bad = await client.post(CLASSES, { metadata: { name: 'bad' }, spec: { controller: 'nginx', parameters: { kind: 'Config', name: 'cfg', scope: 'Namespace' } } })
    assert.deepEqual(causes(bad.body), [
      'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
      "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
    ])
    assert.equal((await client.get(`${CLASSES}/bad`)).status, 404)
    assert.equal((await client.delete(`${CLASSES}/nginx`)).status, 200)
  })

  it('defaults a network policy (policy types from its rules, TCP ports), and refuses bad ports and peers', async () => {
    const body = {
      metadata: { name: 'egress' },
      spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }, { port: 8000, endPort: 9000 }], to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }] }] },
    }
    assert.equal((await client.post(POLICIES, body)).status, 201)
    const read = await client.get(`${POLICIES}/egress`)
    assert.deepEqual(read.body.spec.policyTypes, ['Ingress', 'Egress'])
    assert.deepEqual(read.body.spec.egress[0].ports, [
      { port: 53, protocol: 'TCP' },
      { port: 8000, endPort: 9000, protocol: 'TCP' },
    ])
    const bad = await client.post(POLICIES, {
      metadata: { name: 'bad' },
      spec: {
        podSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] },
        ingress: [
          {
            ports: [{ port: 'http', endPort: 90 }, { port: 100, endPort: 90, protocol: 'ICMP' }],
            from: [{}, { ipBlock: { cidr: '10.0.0.0/16', except: ['192.168.0.0/24'] }, podSelector: {} }],
          },
        ],
        policyTypes: ['Ingress', 'Sideways'],
      },
    })
    assert.equal(bad.status, 422)
    assert.deepEqual(causes(bad.body), [
      "spec.podSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric',
      'spec.ingress[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
      'spec.ingress[0].ports[1].endPort: Invalid value: 90: must be greater than or equal to `port`',
      'spec.ingress[0].from[0]: Required value: must specify a peer',
      'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "192.168.0.0/24": must be a strict subset of `cidr`',
      'spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer',
      'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
    ])
    assert.equal((await client.get(`${POLICIES}/bad`)).status, 404)
    assert.equal((await client.delete(`${POLICIES}/egress`)).status, 200)
  })

  it('requires an IPAddress parent reference and keeps it immutable', async () => {
    const missing = await client.post(IPS, { metadata: { name: '10.0.0.7' }, spec: {} })
    assert.deepEqual(causes(missing.body), ['spec.parentRef: Required value'])
    assert.equal((await client.get(`${IPS}/10.0.0.7`)).status, 404)
    const ref = { group: '', resource: 'services', namespace: 'default', name: 'web' }
    assert.equal((await client.post(IPS, { metadata: { name: '10.0.0.7' }, spec: { parentRef: ref } })).status, 201)
    const read = await client.get(`${IPS}/10.0.0.7`)
    const moved = await client.put(`${IPS}/10.0.0.7`, { ...read.body, spec: { parentRef: { ...ref, name: 'other' } } })
    assert.deepEqual(causes(moved.body), [
      'spec.parentRef: Invalid value: networking.ParentReference{Group:"", Resource:"services", Namespace:"default", Name:"other"}: field is immutable',
    ])
    assert.equal((await client.delete(`${IPS}/10.0.0.7`)).status, 200)
  })

  it('checks ServiceCIDR ranges, lets a single-stack range gain its second family, and refuses other changes', async () => {
    const bad = await client.post(CIDRS, { metadata: { name: 'bad' }, spec: { cidrs: ['10.0.0.0/16', '10.1.0.0/16'] } })
    assert.deepEqual(causes(bad.body), [
      'spec.cidrs: Invalid value: []string{"10.0.0.0/16", "10.1.0.0/16"}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64',
    ])
    assert.equal((await client.get(`${CIDRS}/bad`)).status, 404)
    assert.equal((await client.post(CIDRS, { metadata: { name: 'extra' }, spec: { cidrs: ['10.0.0.0/16'] } })).status, 201)
    const read = await client.get(`${CIDRS}/extra`)
    const dual = await client.put(`${CIDRS}/extra`, { ...read.body, spec: { cidrs: ['10.0.0.0/16', 'fd00::/108'] } })
    assert.equal(dual.status, 200, dual.text)
    const changed = await client.put(`${CIDRS}/extra`, { ...dual.body, spec: { cidrs: ['10.2.0.0/16', 'fd00::/108'] } })
    assert.deepEqual(causes(changed.body), ['spec.cidrs[0]: Invalid value: "10.2.0.0/16": field is immutable'])
    assert.equal((await client.delete(`${CIDRS}/extra`)).status, 200)
  })
})
