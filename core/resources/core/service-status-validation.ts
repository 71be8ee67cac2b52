/**
 * A Service's load-balancer status, as upstream's ValidateLoadBalancerStatus
 * checks it for a write through `services/<name>/status`: only a
 * LoadBalancer service has ingress points (AllowServiceLBStatusOnNonLB is
 * off and locked at 1.32); each point's IP is an address, its hostname a DNS
 * name that is no address, and its ipMode (LoadBalancerIPMode, GA at 1.32)
 * says how traffic reaches it, set exactly when an IP is. The defaults
 * (service-defaults.ts) give a LoadBalancer service's addressed points the
 * VIP mode first.
 */
import { type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, isSet, notSupported, required } from '../../machinery/field.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { list, record, text } from '../columns/values.js'
import { IP_MESSAGE } from './service-validation.js'
import { parseIPSloppy } from './sloppy-ip.js'

const IP_MODES = ['Proxy', 'VIP']

/** Upstream's ValidateLoadBalancerStatus, for a Service of type `serviceType`. */
export function validateLoadBalancerStatus(status: unknown, path: FieldPath, serviceType: string): FieldError[] {
  const ingress = list(record(status)['ingress'])
  const ingressPath = path.child('ingress')
  if (serviceType !== 'LoadBalancer' && ingress.length > 0) return [forbiddenField(ingressPath, "may only be used when `spec.type` is 'LoadBalancer'")]
  return ingress.flatMap((point, i) => ingressPointProblems(record(point), ingressPath.index(i), true))
}

/**
 * An Ingress's load-balancer status (upstream's
 * validateIngressLoadBalancerStatus): its points as a Service's, without
 * the ipMode a Service's have.
 */
export function validateIngressLoadBalancerStatus(status: unknown, path: FieldPath): FieldError[] {
  const ingressPath = path.child('ingress')
  return list(record(status)['ingress']).flatMap((point, i) => ingressPointProblems(record(point), ingressPath.index(i), false))
}

/** One load-balancer ingress point: an IP that parses, a hostname that is a DNS name, and (for a Service's) its ipMode. */
function ingressPointProblems(entry: Record<string, unknown>, at: FieldPath, withIpMode: boolean): FieldError[] {
  const errs: FieldError[] = []
  const ip = text(entry['ip'])
  if (ip && !parseIPSloppy(ip)) errs.push(invalid(at.child('ip'), ip, IP_MESSAGE))
  if (withIpMode) {
    const mode = entry['ipMode']
    if (!isSet(mode)) {
      if (ip) errs.push(required(at.child('ipMode'), 'must be specified when `ip` is set'))
    } else if (!ip) {
      errs.push(forbiddenField(at.child('ipMode'), 'may not be specified when `ip` is not set'))
    } else if (!IP_MODES.includes(text(mode))) {
      errs.push(notSupported(at.child('ipMode'), mode, IP_MODES))
    }
  }
  const hostname = text(entry['hostname'])
  if (hostname) {
    for (const msg of isDNS1123Subdomain(hostname)) errs.push(invalid(at.child('hostname'), hostname, msg))
    if (parseIPSloppy(hostname)) errs.push(invalid(at.child('hostname'), hostname, 'must be a DNS name, not an IP address'))
  }
  return errs
}

/** Upstream's ValidateServiceStatusUpdate: the metadata rules run before, generically. */
export function validateServiceStatusUpdate(svc: KubeObject): FieldError[] {
  const type = text(record(svc['spec'])['type'])
  return validateLoadBalancerStatus(record(svc['status'])['loadBalancer'], fieldPath('status').child('loadBalancer'), type)
}
