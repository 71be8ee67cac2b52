/** A Service's defaults and the rules of its spec, with upstream's messages. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { applyServiceDefaultsInSteps, prepareServiceForUpdate } from '../../../core/resources/core/service-defaults.js'
import { validateServiceInSteps, validateServiceUpdateInSteps } from '../../../core/resources/core/service-validation.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'
import { errorText } from '../../../core/machinery/field.js'

const applyServiceDefaults = (svc: KubeObject) => runAtOnce(applyServiceDefaultsInSteps(svc))
const validateService = (svc: KubeObject) => runAtOnce(validateServiceInSteps(svc))
const validateServiceUpdate = (svc: KubeObject, old: KubeObject) => runAtOnce(validateServiceUpdateInSteps(svc, old))

function svc(spec: Record<string, unknown>): KubeObject {
  return { metadata: { name: 's', namespace: 'default' }, spec }
}

/** The messages a create of `spec` meets, after the defaults. */
function problems(spec: Record<string, unknown>): string[] {
  const obj = svc(spec)
  applyServiceDefaults(obj)
  return validateService(obj).map(errorText)
}

describe('service defaults', () => {
  it('fills type, affinity, traffic policies, protocol and target port', () => {
    const obj = svc({ type: 'NodePort', ports: [{ port: 80 }, { port: 81, targetPort: 'http', protocol: 'UDP' }] })
    applyServiceDefaults(obj)
    assert.deepEqual(obj.spec, {
      type: 'NodePort',
      sessionAffinity: 'None',
      externalTrafficPolicy: 'Cluster',
      internalTrafficPolicy: 'Cluster',
      ports: [
        { port: 80, protocol: 'TCP', targetPort: 80 },
        { port: 81, targetPort: 'http', protocol: 'UDP' },
      ],
    })
  })

  it('makes a service with no type a ClusterIP one, and copies clusterIP into clusterIPs', () => {
    const obj = svc({ clusterIP: '10.0.0.9', ports: [{ port: 80 }] })
    applyServiceDefaults(obj)
    assert.equal((obj.spec as Record<string, unknown>)['type'], 'ClusterIP')
    assert.deepEqual((obj.spec as Record<string, unknown>)['clusterIPs'], ['10.0.0.9'])
    assert.equal((obj.spec as Record<string, unknown>)['externalTrafficPolicy'], undefined)
  })

  it('keeps the allocated IP and node ports an update leaves out, and drops node ports on a change to ClusterIP', () => {
    const old = svc({ type: 'NodePort', clusterIP: '10.0.0.9', clusterIPs: ['10.0.0.9'], ports: [{ port: 80, protocol: 'TCP', nodePort: 30001 }] })
    const replaced = svc({ type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }] })
    prepareServiceForUpdate(replaced, old)
    assert.equal((replaced.spec as Record<string, unknown>)['clusterIP'], '10.0.0.9')
    assert.deepEqual((replaced.spec as Record<string, unknown>)['ports'], [{ port: 80, protocol: 'TCP', nodePort: 30001 }])
    const toClusterIP = svc({ ...structuredClone(old.spec as object), type: 'ClusterIP' })
    prepareServiceForUpdate(toClusterIP, old)
    assert.deepEqual((toClusterIP.spec as Record<string, unknown>)['ports'], [{ port: 80, protocol: 'TCP' }])
  })
})

describe('service validation', () => {
  it('accepts a plain ClusterIP service', () => {
    assert.deepEqual(problems({ ports: [{ port: 80 }], selector: { app: 'web' } }), [])
  })

  it('requires ports unless headless or ExternalName', () => {
    assert.deepEqual(problems({}), ['spec.ports: Required value'])
    assert.deepEqual(problems({ clusterIP: 'None' }), [])
    assert.deepEqual(problems({ type: 'ExternalName', externalName: 'example.com' }), [])
  })

  it('requires unique names when there are several ports, and ports in 1-65535', () => {
    assert.deepEqual(problems({ ports: [{ port: 80 }, { name: 'b', port: 0 }] }), [
      'spec.ports[0].name: Required value',
      'spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'spec.ports[1].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive',
    ])
    assert.deepEqual(problems({ ports: [{ name: 'a', port: 80 }, { name: 'a', port: 81 }] }), ['spec.ports[1].name: Duplicate value: "a"'])
  })

  it('writes an unset port of a duplicate pair as Go does, its zero value', () => {
    const texts = problems({ ports: [{ name: 'a' }, { name: 'b' }] })
    assert.ok(texts.some((t) => t.startsWith('spec.ports[1]: Duplicate value: core.ServicePort{') && t.includes(' Port:0, ')), texts.join('\n'))
    assert.ok(!texts.some((t) => t.includes('undefined')), texts.join('\n'))
  })

  it('refuses the same port and protocol twice, an unknown protocol, and a bad target port name', () => {
    assert.deepEqual(problems({ ports: [{ name: 'a', port: 80 }, { name: 'b', port: 80 }] }), [
      'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
    ])
    assert.deepEqual(problems({ ports: [{ port: 80, protocol: 'HTTP' }] }), [
      'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    ])
    assert.deepEqual(problems({ ports: [{ port: 80, targetPort: 'Web' }] }), [
      'spec.ports[0].targetPort: Invalid value: "Web": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ])
  })

  it('refuses a node port on a ClusterIP service and an unknown type', () => {
    assert.deepEqual(problems({ type: 'ClusterIP', ports: [{ port: 80, nodePort: 30001 }] }), [
      "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
    ])
    assert.deepEqual(problems({ type: 'Internal', ports: [{ port: 80 }] }), [
      'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    ])
  })

  it('checks the selector as labels', () => {
    assert.deepEqual(problems({ ports: [{ port: 80 }], selector: { app: 'not valid' } }).length, 1)
  })

  it('checks cluster IPs: an address, or None for headless but not for NodePort', () => {
    assert.deepEqual(problems({ clusterIP: '10.0.0.256', ports: [{ port: 80 }] }), [
      'spec.clusterIPs[0]: Invalid value: "10.0.0.256": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ])
    assert.deepEqual(problems({ type: 'NodePort', clusterIP: 'None', ports: [{ port: 80 }] }), [
      "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services",
    ])
    assert.deepEqual(problems({ clusterIPs: ['10.0.0.1'], ports: [{ port: 80 }] }), [
      'spec.clusterIPs: Invalid value: []string{"10.0.0.1"}: must be empty when `clusterIP` is not specified',
    ])
  })

  it('ExternalName: a DNS name is required, cluster IPs and families are forbidden', () => {
    assert.deepEqual(problems({ type: 'ExternalName' }), ['spec.externalName: Required value'])
    assert.deepEqual(problems({ type: 'ExternalName', externalName: 'example.com', clusterIP: '10.0.0.3', ipFamilyPolicy: 'SingleStack' }), [
      'spec.clusterIPs: Forbidden: may not be set for ExternalName services',
      'spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services',
    ])
  })

  it('refuses a change of the cluster IP, but not a change to ExternalName', () => {
    const old = svc({ type: 'ClusterIP', sessionAffinity: 'None', clusterIP: '10.0.0.9', clusterIPs: ['10.0.0.9'], ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }] })
    const changed = svc({ ...structuredClone(old.spec as object), clusterIP: '10.0.0.10', clusterIPs: ['10.0.0.10'] })
    assert.deepEqual(validateServiceUpdate(changed, old).map(errorText), [
      'spec.clusterIPs[0]: Invalid value: []string{"10.0.0.10"}: may not change once set',
    ])
    const external = svc({ type: 'ExternalName', externalName: 'example.com', sessionAffinity: 'None', ports: [] })
    prepareServiceForUpdate(external, old)
    assert.deepEqual(validateServiceUpdate(external, old).map(errorText), [])
  })
})
