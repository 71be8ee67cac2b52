/**
 * `%#v` of a metav1.ObjectMeta, the value upstream's field errors show for
 * a metadata they refuse whole (an access review's, which must be empty).
 * Go prints the struct decoded from the request: every field in declaration
 * order, zero values included, and the times through time.Time's GoString
 * (a timestamp decoded from JSON is in the server's local zone).
 *
 * The text is cut at MAX_INVALID_TEXT_BYTES: a request of megabytes of
 * owner references would otherwise make an error of a hundred megabytes.
 */
import { GoLiteral, goPointerText, goQuote, goStringMapText, goStringSliceText } from './go-format.js'
import { MAX_INVALID_TEXT_BYTES } from './field.js'
import { isPlainObject } from './object.js'

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']

/** time.Time's GoString of a metav1.Time field: Go's zero time (UTC) when unset, else the decoded time in time.Local. */
function goTimeSyntax(value: unknown): string {
  const m = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/.exec(value) : null
  if (!m) return 'time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)'
  const [, year, month, day, hour, minute, second, fraction] = m
  const nanos = Number((fraction ?? '').padEnd(9, '0'))
  const parts = [Number(year), `time.${MONTHS[Number(month) - 1] ?? 'January'}`, Number(day), Number(hour), Number(minute), Number(second), nanos]
  return `time.Date(${parts.join(', ')}, time.Local)`
}

/** A pointer to a metav1.Time: fmt prints a nil one as `<nil>` (its GoString panics on nil), a set one through GoString. */
const goTimePointer = (value: unknown): string => (typeof value === 'string' && value !== '' ? goTimeSyntax(value) : '<nil>')

const goBoolPointer = (value: unknown): string => goPointerText('bool', value, String)

function goOwnerReference(value: unknown): string {
  const r = isPlainObject(value) ? value : {}
  return (
    `v1.OwnerReference{APIVersion:${goQuote(r['apiVersion'])}, Kind:${goQuote(r['kind'])}, Name:${goQuote(r['name'])}, UID:${goQuote(r['uid'])}, ` +
    `Controller:${goBoolPointer(r['controller'])}, BlockOwnerDeletion:${goBoolPointer(r['blockOwnerDeletion'])}}`
  )
}

function goManagedFieldsEntry(value: unknown): string {
  const e = isPlainObject(value) ? value : {}
  const fieldsV1 = e['fieldsV1'] === undefined || e['fieldsV1'] === null ? '(*v1.FieldsV1)(nil)' : `(*v1.FieldsV1)(&${JSON.stringify(e['fieldsV1'])})`
  return (
    `v1.ManagedFieldsEntry{Manager:${goQuote(e['manager'])}, Operation:${goQuote(e['operation'])}, APIVersion:${goQuote(e['apiVersion'])}, ` +
    `Time:${goTimePointer(e['time'])}, FieldsType:${goQuote(e['fieldsType'])}, FieldsV1:${fieldsV1}, Subresource:${goQuote(e['subresource'])}}`
  )
}

/** `%#v` of a slice of structs, its items printed until the text reaches `room` characters. */
function goStructSlice(type: string, value: unknown, item: (v: unknown) => string, room: number): string {
  if (!Array.isArray(value)) return `[]${type}(nil)`
  const parts: string[] = []
  let length = 0
  for (const v of value) {
    if (length > room) break
    const text = item(v)
    parts.push(text)
    length += text.length + 2
  }
  return `[]${type}{${parts.join(', ')}}`
}

export function goObjectMeta(meta: unknown): GoLiteral {
  const m = isPlainObject(meta) ? meta : {}
  const generation = typeof m['generation'] === 'number' ? m['generation'] : 0
  const grace = goPointerText('int64', m['deletionGracePeriodSeconds'], String)
  const head =
    `v1.ObjectMeta{Name:${goQuote(m['name'])}, GenerateName:${goQuote(m['generateName'])}, Namespace:${goQuote(m['namespace'])}, ` +
    `SelfLink:${goQuote(m['selfLink'])}, UID:${goQuote(m['uid'])}, ResourceVersion:${goQuote(m['resourceVersion'])}, Generation:${generation}, ` +
    `CreationTimestamp:${goTimeSyntax(m['creationTimestamp'])}, DeletionTimestamp:${goTimePointer(m['deletionTimestamp'])}, ` +
    `DeletionGracePeriodSeconds:${grace}, Labels:${goStringMapText(m['labels'])}, Annotations:${goStringMapText(m['annotations'])}, `
  const owners = goStructSlice('v1.OwnerReference', m['ownerReferences'], goOwnerReference, MAX_INVALID_TEXT_BYTES)
  const managed = goStructSlice('v1.ManagedFieldsEntry', m['managedFields'], goManagedFieldsEntry, MAX_INVALID_TEXT_BYTES)
  const text = `${head}OwnerReferences:${owners}, Finalizers:${goStringSliceText(m['finalizers'])}, ManagedFields:${managed}}`
  return new GoLiteral(text.length > MAX_INVALID_TEXT_BYTES ? text.slice(0, MAX_INVALID_TEXT_BYTES) : text)
}
