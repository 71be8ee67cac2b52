/**
 * A pod's addresses as upstream stores them. Its internal status keeps the
 * list (`podIPs`) alone, so every write goes through v1's conversion: a
 * `podIP` given without a list becomes the list's one entry, a `podIP` that
 * disagrees with the list's first entry replaces the whole list (older
 * kubelets write the single field), and on the way back out `podIP` is the
 * list's first entry. `hostIP` and `hostIPs` are both kept as written:
 * validation holds them together.
 */
import { text } from '../columns/values.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'


export function syncPodIPs(pod: KubeObject): void {
  const status = pod['status']
  if (!isPlainObject(status)) return
  const single = text(status['podIP'])
  const listed = Array.isArray(status['podIPs']) ? status['podIPs'] : []
  const first = isPlainObject(listed[0]) ? text(listed[0]['ip']) : ''
  if (single && (listed.length === 0 || single !== first)) status['podIPs'] = [{ ip: single }]
  const ips = Array.isArray(status['podIPs']) ? status['podIPs'] : []
  if (ips.length > 0) {
    const ip = isPlainObject(ips[0]) ? text(ips[0]['ip']) : ''
    if (ip) status['podIP'] = ip
    else delete status['podIP']
  } else {
    delete status['podIP']
  }
}
