/** The networking.k8s.io rules on their own, with upstream's messages. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { validateIngressSpec, validateIngressClass } from '../../../core/resources/networking/ingress.js'
import {
  applyNetworkPolicyDefaults,
  validateNetworkPolicy,
  validateNetworkPolicyUpdate,
} from '../../../core/resources/networking/network-policy.js'
import { validateServiceCIDRSpec } from '../../../core/resources/networking/addresses.js'
import { errorText } from '../../../core/machinery/field.js'

const obj = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'x', namespace: 'default' }, spec })
const backend = { service: { name: 'web', port: { number: 80 } } }
const ingressPath = (path: string, pathType: string, b: unknown = backend) => ({ rules: [{ http: { paths: [{ path, pathType, backend: b }] } }] })

describe('ingress rules', () => {
  it('refuses dot segments and encoded slashes in Exact and Prefix paths, but not in ImplementationSpecific ones', () => {
    assert.deepEqual(validateIngressSpec(obj(ingressPath('/a/../b/.', 'Prefix'))).map(errorText), [
      "spec.rules[0].http.paths[0].path: Invalid value: \"/a/../b/.\": must not contain '/../'",
      "spec.rules[0].http.paths[0].path: Invalid value: \"/a/../b/.\": cannot end with '/.'",
    ])
    assert.deepEqual(validateIngressSpec(obj(ingressPath('/a%2Fb', 'Exact'))).map(errorText), [
      "spec.rules[0].http.paths[0].path: Invalid value: \"/a%2Fb\": must not contain '%2F'",
    ])
    assert.deepEqual(validateIngressSpec(obj(ingressPath('/a//b', 'ImplementationSpecific'))), [])
    assert.deepEqual(validateIngressSpec(obj(ingressPath('', 'ImplementationSpecific'))), [])
    assert.deepEqual(validateIngressSpec(obj(ingressPath('/', 'Regex'))).map(errorText), [
      'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
    ])
  })

  it('checks service backends by DNS-1035 name and port, and resource backends by kind and name', () => {
    const spec = {
      defaultBackend: { service: { name: '1web', port: { number: 70000 } } },
      rules: [{ http: { paths: [{ path: '/', pathType: 'Prefix', backend: { resource: { kind: 'Bucket' }, service: { name: 'web' } } }] } }],
    }
    assert.deepEqual(validateIngressSpec(obj(spec)).map(errorText), [
      "spec.defaultBackend.service.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      'spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends',
    ])
    assert.deepEqual(validateIngressSpec(obj({ defaultBackend: { resource: { kind: 'Bucket' } } })).map(errorText), [
      'spec.defaultBackend.resource.name: Required value',
    ])
    assert.deepEqual(validateIngressSpec(obj({ defaultBackend: { service: { name: 'web' } } })).map(errorText), [
      'spec.defaultBackend: Required value: port name or number is required',
    ])
  })

  it('accepts wildcard hosts and refuses a star elsewhere', () => {
    assert.deepEqual(validateIngressSpec(obj({ rules: [{ host: '*.example.com' }] })), [])
    assert.equal(validateIngressSpec(obj({ rules: [{ host: 'foo.*.com' }] })).length, 1)
    assert.deepEqual(validateIngressSpec(obj({ rules: [{ host: 'example.com', http: { paths: [] } }] })).map(errorText), [
      'spec.rules[0].http.paths: Required value',
    ])
  })

  it('forbids a namespace on cluster-scoped ingress class parameters', () => {
    const spec = { controller: 'example.com/lb', parameters: { kind: 'Cfg', name: 'a', scope: 'Cluster', namespace: 'default' } }
    assert.deepEqual(validateIngressClass(obj(spec)).map(errorText), ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"])
    assert.deepEqual(validateIngressClass(obj({})).map(errorText), ['spec.controller: Required value'])
  })
})

describe('network policy rules', () => {
  it('keeps given policy types and protocols, and defaults only what is missing', () => {
    const np = obj({ podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'UDP' }] }], egress: [], policyTypes: ['Egress'] })
    applyNetworkPolicyDefaults(np)
    assert.deepEqual(np.spec, { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'UDP' }] }], egress: [], policyTypes: ['Egress'] })
    const plain = obj({ podSelector: {} })
    applyNetworkPolicyDefaults(plain)
    assert.deepEqual(plain.spec, { podSelector: {}, policyTypes: ['Ingress'] })
  })

  it('refuses an invalid CIDR on create but keeps one the stored policy already had', () => {
    const spec = { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/33' } }] }], policyTypes: ['Ingress'] }
    assert.deepEqual(validateNetworkPolicy(obj(spec)).map(errorText), [
      'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ])
    assert.deepEqual(validateNetworkPolicyUpdate(obj(spec), obj(spec)), [])
  })

  it('refuses more than two policy types, and a missing IP block cidr', () => {
    const spec = { podSelector: {}, egress: [{ to: [{ ipBlock: {} }] }], policyTypes: ['Ingress', 'Egress', 'Ingress'] }
    assert.deepEqual(validateNetworkPolicy(obj(spec)).map(errorText), [
      'spec.egress[0].to[0].ipBlock.cidr: Required value',
      'spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes',
    ])
  })
})

describe('service CIDR rules', () => {
  it('needs one or two valid ranges', () => {
    assert.deepEqual(validateServiceCIDRSpec(obj({})).map(errorText), ['spec.cidrs: Required value: at least one CIDR required'])
    assert.deepEqual(validateServiceCIDRSpec(obj({ cidrs: ['10.0.0.0/8', 'fd00::/64', '11.0.0.0/8'] })).map(errorText), [
      'spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{"10.0.0.0/8", "fd00::/64", "11.0.0.0/8"}}: may only hold up to 2 values',
    ])
    assert.deepEqual(validateServiceCIDRSpec(obj({ cidrs: ['10.0.0.1'] })).map(errorText), [
      'spec.cidrs[0]: Invalid value: "10.0.0.1": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ])
  })
})
