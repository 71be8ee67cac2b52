/**
 * The rules of a ControllerRevision (upstream's ValidateControllerRevision
 * and its update rule): a revision carries its data and a non-negative
 * number; the number may change later, the data never does.
 */
import { type FieldError, fieldPath, invalid, required } from '../../machinery/field.js'
import { GoLiteral } from '../../machinery/go-format.js'
import type { KubeObject } from '../../machinery/object.js'

const hasData = (cr: KubeObject): boolean => cr['data'] !== undefined && cr['data'] !== null

export function validateControllerRevision(cr: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  if (!hasData(cr)) errs.push(required(fieldPath('data'), 'data is mandatory'))
  const revision = cr['revision']
  if (typeof revision === 'number' && revision < 0) errs.push(invalid(fieldPath('revision'), revision, 'must be greater than or equal to 0'))
  return errs
}

/**
 * Upstream keeps the data as the bytes a client sent (a runtime.Unknown) and
 * shows them byte by byte; compact JSON is what clients send.
 */
function goUnknown(data: unknown): GoLiteral {
  const bytes = [...new TextEncoder().encode(JSON.stringify(data))].map((b) => `0x${b.toString(16)}`).join(', ')
  return new GoLiteral(
    `runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, Raw:[]uint8{${bytes}}, ContentEncoding:"", ContentType:"application/json"}`,
  )
}

export function validateControllerRevisionUpdate(cr: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateControllerRevision(cr)
  // Upstream compares the data byte for byte: key order counts.
  if (JSON.stringify(cr['data'] ?? null) !== JSON.stringify(old['data'] ?? null))
    errs.push(invalid(fieldPath('data'), hasData(cr) ? goUnknown(cr['data']) : 'null', 'field is immutable'))
  return errs
}
