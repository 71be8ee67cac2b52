/**
 * What upstream's JSON decoder does to a body before anything else sees it,
 * driven by the type tables: a value of the wrong JSON type is a 400
 * (`Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal
 * string into Go struct field PodSpec.spec.containers of type []v1.Container`),
 * unknown fields and nulls are dropped, and the values with their own
 * decoders (times, quantities, durations, base64 bytes) are checked and left
 * in their stored form. Strict field validation (refusing unknown fields) is
 * a separate choice of the request.
 */
import { StatusError } from '../../machinery/status-error.js'
import { illegalBase64Index } from '../../machinery/base64.js'
import { isPlainObject } from '../../machinery/object.js'
import type { JsonForms, TypeDef, TypeRef, TypeTable } from './model.js'
import { fieldsByName, jsonFormOf } from './model.js'
import { durationError, isGoZeroTimeText, notAString, parseQuantity, parseTime } from './go-values.js'
import { type Checkpointed, checkpointDue, runAtOnce } from '../../machinery/time-slice.js'

class DecodeError extends Error {
  /** How upstream's unstructured converter (a strategic merge's result) words the same mismatch, where it words it otherwise. */
  converted?: string
}

/**
 * A body that does not decode as its type: 400 BadRequest. `converted` is
 * the reason upstream's unstructured converter gives for the same value,
 * which a strategic merge patch's result meets instead of the JSON decoder.
 */
export class UndecodableBody extends StatusError {
  constructor(
    message: string,
    readonly converted: string | undefined,
  ) {
    super(400, 'BadRequest', message)
  }
}

/**
 * The converter's words for a JSON value in a field of a scalar type: an
 * integer may convert (Go converts an integer to a string type, and then
 * says it cannot), anything else of another kind is a type it does not
 * recognize. Undefined where the converter would accept the value.
 */
function converterMismatch(value: unknown, scalar: string): string | undefined {
  const goKind = SCALAR_GO_TYPES[scalar]
  if (!goKind || scalar === 'bytes') return undefined
  const integer = typeof value === 'number' && Number.isInteger(value)
  if (scalar === 'string') return integer ? 'cannot convert int64 to string' : 'unrecognized type: string'
  if (typeof value === 'number' && scalar !== 'boolean') return integer || scalar === 'double' ? undefined : `cannot convert float64 to ${goKind}`
  return `unrecognized type: ${goKind}`
}

/** Go's spelling of a JSON value's kind in decode errors. */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'boolean') return 'bool'
  return typeof v === 'string' || typeof v === 'number' ? typeof v : 'object'
}

/** `io.k8s.api.core.v1.PodSpec` -> `v1.PodSpec`, the Go type as its package alias prints it. */
function goName(defName: string): string {
  const parts = defName.split('.')
  return `${parts[parts.length - 2] ?? ''}.${parts[parts.length - 1] ?? ''}`
}

function structName(defName: string): string {
  return defName.slice(defName.lastIndexOf('.') + 1)
}

const SCALAR_GO_TYPES: Readonly<Record<string, string>> = {
  string: 'string',
  boolean: 'bool',
  int32: 'int32',
  int64: 'int64',
  double: 'float64',
  bytes: '[]uint8',
}

function goType(t: TypeRef): string {
  if ('ref' in t) return goName(t.ref)
  if ('array' in t) return `[]${goType(t.array)}`
  if ('map' in t) return `map[string]${goType(t.map)}`
  return SCALAR_GO_TYPES[t.scalar] ?? t.scalar
}

const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1
/**
 * JSON.parse has rounded a literal to a double already: 2^63 - 1 arrives as
 * 2^63. A double whose magnitude reaches 2^63 is refused, as upstream refuses
 * the literal; -2^63 too, since it would be written back as text
 * (-9223372036854776000) that no int64 reader accepts.
 */
const INT64_BOUND = 2 ** 63

function fitsScalar(v: number, scalar: 'int32' | 'int64'): boolean {
  if (!Number.isInteger(v)) return false
  return scalar === 'int32' ? v >= INT32_MIN && v <= INT32_MAX : Math.abs(v) < INT64_BOUND
}

/**
 * The number as Go's error echoes it: Go quotes the literal, which JSON.parse
 * has lost, so an integer is written out in full (2^63 as the
 * 9223372036854775808 a client sends, not 9223372036854776000) and an
 * exponent without JavaScript's `+` (1e300, not 1e+300).
 */
function literalText(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 1e21 ? BigInt(v).toString() : String(v).replace('e+', 'e')
}

/** Where a value sits, for Go's "Go struct field Struct.a.b" wording: the innermost struct and the field names from the top. */
interface Where {
  struct: string
  path: string[]
  /** The value's place as field validation names it, indices included. */
  at: string
}

function typeError(value: unknown, t: TypeRef, where: Where, literal = false): DecodeError {
  const kind = literal ? `number ${literalText(value as number)}` : jsonKind(value)
  const err = new DecodeError(`json: cannot unmarshal ${kind} into Go struct field ${where.struct}.${where.path.join('.')} of type ${goType(t)}`)
  if ('scalar' in t) {
    const converted = converterMismatch(value, t.scalar)
    if (converted) err.converted = converted
  }
  return err
}

function zero(t: TypeRef): unknown {
  if ('array' in t) return []
  if ('map' in t || 'ref' in t) return {}
  switch (t.scalar) {
    case 'string':
    case 'bytes':
      return ''
    case 'boolean':
      return false
    case 'int32':
    case 'int64':
    case 'double':
    case 'int-or-string':
      return 0
    case 'quantity':
      return '0'
    default:
      return undefined
  }
}

class Decoder {
  /** Where fields the type does not have were met (`spec.containers[0].colour`), for strict field validation. */
  readonly unknownFields: string[] = []

  constructor(private readonly types: TypeTable) {}

  /**
   * Written as generators yielding at checkpoints (a body of 3 MB holds a
   * million values); a scalar is decoded without one, as most values are.
   */
  *object(obj: Record<string, unknown>, def: TypeDef, path: string[], at: string): Checkpointed<void> {
    const fields = fieldsByName(def)
    for (const key of Object.keys(obj)) {
      if (checkpointDue()) yield
      const field = fields.get(key)
      const value = obj[key]
      const here = at ? `${at}.${key}` : key
      if (!field) this.unknownFields.push(here)
      if (!field || value === null || value === undefined) {
        delete obj[key]
        continue
      }
      const where = { struct: structName(def.name), path: [...path, key], at: here }
      const decoded = 'scalar' in field.type ? this.scalar(value, field.type, where) : yield* this.value(value, field.type, where)
      if (decoded === undefined) delete obj[key]
      else obj[key] = decoded
    }
  }

  *value(v: unknown, t: TypeRef, where: Where): Checkpointed<unknown> {
    if ('ref' in t) {
      const def = this.types[t.ref]
      if (def?.jsonForms) return yield* this.oneOfForms(v, def.jsonForms, where)
      if (!isPlainObject(v)) throw typeError(v, t, where)
      if (def) yield* this.object(v, def, where.path, where.at)
      return v
    }
    if ('array' in t) {
      if (!Array.isArray(v)) throw typeError(v, t, where)
      // In place, as maps are: the list stays the one it was (managedFields this server wrote are known by it).
      for (let i = 0; i < v.length; i++) {
        if (checkpointDue()) yield
        const item: unknown = v[i]
        const decoded = (item === null ? zero(t.array) : yield* this.value(item, t.array, { ...where, at: `${where.at}[${i}]` })) ?? null
        if (decoded !== item) v[i] = decoded
      }
      return v
    }
    if ('map' in t) {
      if (!isPlainObject(v)) throw typeError(v, t, where)
      const ofStrings = 'scalar' in t.map && t.map.scalar === 'string'
      // Keys by `in` rather than Object.entries: no pair allocated for each entry of a large map.
      for (const k in v) {
        if (checkpointDue()) yield
        const item = v[k]
        // A string in a map of strings (ConfigMap data, labels) stays as it is: no path built for an error
        // that cannot happen, nothing written back; a map of 20000 keys took tens of milliseconds otherwise.
        if (ofStrings && typeof item === 'string') continue
        const decoded = item === null ? this.zeroOf(t.map) : yield* this.value(item, t.map, { ...where, at: `${where.at}.${k}` })
        if (decoded === undefined) delete v[k]
        else v[k] = decoded
      }
      return v
    }
    return this.scalar(v, t, where)
  }

  /** A value of a type with several JSON forms (JSONSchemaPropsOrArray ...); undefined where Go's decoder leaves it empty. */
  private *oneOfForms(v: unknown, forms: JsonForms, where: Where): Checkpointed<unknown> {
    const form = jsonFormOf(forms, v)
    if (!form) {
      if (forms.invalid) throw new DecodeError(forms.invalid)
      return undefined
    }
    const decoded = yield* this.value(v, form.type, where)
    // An empty list is written back as null by the type's marshaller, so it does not survive.
    return Array.isArray(decoded) && decoded.length === 0 ? undefined : decoded
  }

  /** What a null entry of a map becomes: the value type's zero, nothing for types with several JSON forms. */
  private zeroOf(t: TypeRef): unknown {
    return 'ref' in t && this.types[t.ref]?.jsonForms ? undefined : zero(t)
  }

  scalar(v: unknown, t: TypeRef & { scalar: string }, where: Where): unknown {
    switch (t.scalar) {
      case 'string':
        if (typeof v !== 'string') throw typeError(v, t, where)
        return v
      case 'boolean':
        if (typeof v !== 'boolean') throw typeError(v, t, where)
        return v
      case 'double':
        if (typeof v !== 'number') throw typeError(v, t, where)
        return v
      case 'int32':
      case 'int64':
        if (typeof v !== 'number') throw typeError(v, t, where)
        if (!fitsScalar(v, t.scalar)) throw typeError(v, t, where, true)
        return v
      case 'bytes': {
        if (typeof v !== 'string') throw typeError(v, t, where)
        const at = illegalBase64Index(v)
        if (at >= 0) throw new DecodeError(`illegal base64 data at input byte ${at}`)
        return v
      }
      case 'time':
      case 'microtime': {
        if (typeof v !== 'string') throw new DecodeError(notAString(jsonKind(v)))
        const parsed = parseTime(v, t.scalar === 'microtime')
        if ('error' in parsed) throw new DecodeError(parsed.error)
        // Go's zero time marshals as null upstream: the field is left out, as the protobuf codec leaves it.
        return isGoZeroTimeText(parsed.value) ? undefined : parsed.value
      }
      case 'quantity': {
        const parsed = parseQuantity(v)
        if ('error' in parsed) throw new DecodeError(parsed.error)
        return parsed.value
      }
      case 'int-or-string':
        if (typeof v === 'string') return v
        if (typeof v !== 'number') throw new DecodeError(`json: cannot unmarshal ${jsonKind(v)} into Go value of type int32`)
        if (!fitsScalar(v, 'int32')) throw new DecodeError(`json: cannot unmarshal number ${literalText(v)} into Go value of type int32`)
        return v
      case 'duration': {
        if (typeof v !== 'string') throw new DecodeError(notAString(jsonKind(v)))
        const error = durationError(v)
        if (error) throw new DecodeError(error)
        return v
      }
      default:
        // raw: any JSON value (RawExtension, FieldsV1, JSON)
        return v
    }
  }
}

/**
 * Decodes `obj` in place as the type `def` (a kind served as `kind` in
 * `version`), in checkpointed steps; throws 400 BadRequest with upstream's
 * wording on the first value of the wrong type, in document order. Returns
 * the paths of the fields it dropped because the type has none of that name.
 */
export function* decodeAsInSteps(obj: Record<string, unknown>, def: TypeDef, types: TypeTable, kind: string, version: string): Checkpointed<string[]> {
  try {
    const decoder = new Decoder(types)
    yield* decoder.object(obj, def, [], '')
    return decoder.unknownFields
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err
    throw new UndecodableBody(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${err.message}`, err.converted)
  }
}

/** The same decoding at once, for an object of ordinary size. */
export function decodeAs(obj: Record<string, unknown>, def: TypeDef, types: TypeTable, kind: string, version: string): string[] {
  return runAtOnce(decodeAsInSteps(obj, def, types, kind, version))
}
