/**
 * TaintNodesByCondition: a new Node starts with the `not-ready:NoSchedule`
 * taint, which the node lifecycle takes off once the node reports Ready,
 * so nothing is scheduled to it before.
 */
import type { MutatingAdmission } from '../mutating.js'
import { isResource, objects, on } from './pods.js'

const NOT_READY = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }

export const taintNodesByCondition: MutatingAdmission = {
  name: 'TaintNodesByCondition',
  handles: on('CREATE'),
  admit(a) {
    if (!isResource(a, '', 'nodes') || a.subresource || !a.object) return
    const spec = (a.object['spec'] ??= {}) as Record<string, unknown>
    const taints = objects(spec['taints'])
    if (taints.some((t) => t['key'] === NOT_READY.key && t['effect'] === NOT_READY.effect)) return
    spec['taints'] = [...taints, { ...NOT_READY }]
  },
}
