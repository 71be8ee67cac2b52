/**
 * The rules of a RuntimeClass (upstream's pkg/apis/node/validation): its
 * handler is a DNS label fixed at creation, its pod overhead a list of
 * container resources, and its scheduling a node selector of labels with
 * tolerations that are each valid and listed once.
 */
import { duplicate, type FieldError, type FieldPath, fieldPath, invalid } from '../../machinery/field.js'
import { isDNS1123Label } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { isPlainObject } from '../../machinery/object.js'
import { runAtOnce } from '../../machinery/time-slice.js'
import { validateLabels } from '../../validation/object-meta.js'
import { list, record, text } from '../columns/values.js'
import { validateResourcesInSteps } from '../core/pod-spec-resources.js'
import { goToleration, validateTolerations } from '../core/toleration-rules.js'
import { appendAll } from '../../machinery/append-all.js'

/** Its tolerations, each once: two are the same when key, operator, value and effect are (the list's keys). */
function validateUniqueTolerations(tolerations: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  list(tolerations).forEach((t, i) => {
    const r = record(t)
    const key = JSON.stringify([text(r['key']), text(r['operator']), text(r['value']), text(r['effect'])])
    if (seen.has(key)) errs.push(duplicate(path.index(i), goToleration(r)))
    else seen.add(key)
  })
  return errs
}

function validateScheduling(scheduling: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (isPlainObject(scheduling['nodeSelector'])) appendAll(errs, validateLabels(scheduling['nodeSelector'], path.child('nodeSelector')))
  const tolerationsPath = path.child('tolerations')
  appendAll(errs, validateTolerations(scheduling['tolerations'], tolerationsPath))
  appendAll(errs, validateUniqueTolerations(scheduling['tolerations'], tolerationsPath))
  return errs
}

export function validateRuntimeClass(rc: KubeObject): FieldError[] {
  const handler = text(rc['handler'])
  const errs = isDNS1123Label(handler).map((msg) => invalid(fieldPath('handler'), handler, msg))
  // The overhead is checked as a container's limits would be, under `overhead.limits`, as upstream reuses that check.
  const overhead = rc['overhead']
  if (isPlainObject(overhead)) appendAll(errs, runAtOnce(validateResourcesInSteps({ limits: overhead['podFixed'] }, fieldPath('overhead'))))
  const scheduling = rc['scheduling']
  if (isPlainObject(scheduling)) appendAll(errs, validateScheduling(scheduling, fieldPath('scheduling')))
  return errs
}

/** The handler names the runtime its pods already run under: it stays as created. */
export function validateRuntimeClassUpdate(rc: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateRuntimeClass(rc)
  const handler = text(rc['handler'])
  if (handler !== text(old['handler'])) errs.push(invalid(fieldPath('handler'), handler, 'field is immutable'))
  return errs
}
