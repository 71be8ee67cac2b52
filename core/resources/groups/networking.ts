/** networking.k8s.io/v1: ingresses, network policies, service CIDRs and the IPs allocated from them. */
import { validateIngressLoadBalancerStatus } from '../core/service-status-validation.js'
import { RESET_OBJECT_META_FOR_STATUS, type ResourceEntry } from '../catalogue.js'
import { ageColumn, column, nameColumn } from '../columns/common.js'
import { formatLabelSelector } from '../columns/format.js'
import { loadBalancerAddresses } from '../columns/service.js'
import { at, list, record, text, textAt } from '../columns/values.js'
import { defineResource, statusSubresource } from '../define.js'
import type { KubeObject } from '../../machinery/object.js'
import { fieldPath } from '../../machinery/field.js'
import { ipAddressName } from '../names.js'
import {
  validateIPAddress,
  validateIPAddressUpdate,
  validateServiceCIDRSpec,
  validateServiceCIDRUpdate,
} from '../networking/addresses.js'
import {
  applyIngressClassDefaults,
  prepareIngressForCreate,
  validateIngressClass,
  validateIngressClassUpdate,
  validateIngressCreate,
  validateIngressSpec,
} from '../networking/ingress.js'
import { applyNetworkPolicyDefaults, validateNetworkPolicy, validateNetworkPolicyUpdate } from '../networking/network-policy.js'

const GROUP = 'networking.k8s.io'

/** Up to three rule hosts, `*` when no rule names one. */
function ingressHosts(ing: KubeObject): string {
  const rules = list(at(ing, 'spec', 'rules'))
  const hosts: string[] = []
  let more = false
  for (const rule of rules) {
    if (hosts.length === 3) more = true
    const host = text(at(rule, 'host'))
    if (!more && host) hosts.push(host)
  }
  if (hosts.length === 0) return '*'
  return more ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',')
}

export const ingresses: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'Ingress',
  tracksGeneration: true,
  resource: 'ingresses',
  namespaced: true,
  shortNames: ['ing'],
  // Through status, upstream checks the load-balancer points alone.
  subresources: [
    {
      ...statusSubresource('Ingress'),
      validateUpdate: (ing) => validateIngressLoadBalancerStatus(record(ing['status'])['loadBalancer'], fieldPath('status').child('loadBalancer')),
    },
  ],
  storagePath: 'ingress',
  strategy: {
    prepareForCreate: prepareIngressForCreate,
    validate: validateIngressCreate,
    validateUpdate: validateIngressSpec,
  },
  columns: [
    nameColumn,
    column('Class', 'The IngressClass that serves it.', (ing) => text(at(ing, 'spec', 'ingressClassName')) || '<none>'),
    column('Hosts', 'The hosts its rules match.', ingressHosts),
    column('Address', 'Where its load balancer listens.', (ing) => loadBalancerAddresses(at(ing, 'status', 'loadBalancer'))),
    column('Ports', 'The ports it opens.', (ing) => (list(at(ing, 'spec', 'tls')).length > 0 ? '80, 443' : '80')),
    ageColumn,
  ],
})

export const ingressClasses: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'IngressClass',
  resource: 'ingressclasses',
  namespaced: false,
  // Upstream's strategy: 1 at creation, one more whenever the spec changes.
  tracksGeneration: true,
  strategy: {
    applyDefaults: applyIngressClassDefaults,
    validate: validateIngressClass,
    validateUpdate: validateIngressClassUpdate,
  },
  columns: [
    nameColumn,
    column('Controller', 'The controller that serves the class.', textAt('spec', 'controller')),
    column('Parameters', 'The object with its parameters.', (ic) => {
      const p = at(ic, 'spec', 'parameters')
      if (p === undefined) return '<none>'
      const group = text(at(p, 'apiGroup'))
      return `${text(at(p, 'kind'))}${group ? `.${group}` : ''}/${text(at(p, 'name'))}`
    }),
    ageColumn,
  ],
})

export const networkPolicies: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'NetworkPolicy',
  tracksGeneration: true,
  resource: 'networkpolicies',
  singular: 'networkpolicy',
  namespaced: true,
  shortNames: ['netpol'],
  strategy: {
    applyDefaults: applyNetworkPolicyDefaults,
    validate: (np) => validateNetworkPolicy(np),
    validateUpdate: validateNetworkPolicyUpdate,
  },
  columns: [
    nameColumn,
    column('Pod-Selector', 'The pods it applies to.', (np) => formatLabelSelector(at(np, 'spec', 'podSelector'))),
    ageColumn,
  ],
})

export const ipAddresses: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'IPAddress',
  resource: 'ipaddresses',
  singular: 'ipaddress',
  namespaced: false,
  shortNames: ['ip'],
  validateName: ipAddressName,
  strategy: {
    validate: validateIPAddress,
    validateUpdate: (ip, old) => [...validateIPAddress(ip), ...validateIPAddressUpdate(ip, old)],
  },
  columns: [
    nameColumn,
    column('ParentRef', 'The object the address is allocated to.', (ip) => {
      const ref = at(ip, 'spec', 'parentRef')
      if (ref === undefined) return '<none>'
      const group = text(at(ref, 'group'))
      const resource = (group ? `${text(at(ref, 'resource'))}.${group}` : text(at(ref, 'resource'))).toLowerCase()
      const namespace = text(at(ref, 'namespace'))
      return `${resource}${namespace ? `/${namespace}` : ''}/${text(at(ref, 'name'))}`
    }),
  ],
})

export const serviceCIDRs: ResourceEntry = defineResource({
  group: GROUP,
  version: 'v1',
  kind: 'ServiceCIDR',
  resource: 'servicecidrs',
  namespaced: false,
  // Its status strategy calls ResetObjectMetaForStatus.
  subresources: [statusSubresource('ServiceCIDR', RESET_OBJECT_META_FOR_STATUS)],
  strategy: {
    prepareForCreate: (sc) => {
      sc['status'] = {}
    },
    validate: validateServiceCIDRSpec,
    validateUpdate: (sc, old) => [...validateServiceCIDRSpec(sc), ...validateServiceCIDRUpdate(sc, old)],
  },
  columns: [
    nameColumn,
    column('CIDRs', 'The ranges service IPs come from.', (sc) => list(at(sc, 'spec', 'cidrs')).map(text).join(',')),
    ageColumn,
  ],
})

export const networkingEntries: ResourceEntry[] = [ingressClasses, ingresses, ipAddresses, networkPolicies, serviceCIDRs]
