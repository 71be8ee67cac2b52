/**
 * zod building blocks shared by the config file kinds, so each kind states
 * its fields once and every kind words the same problem the same way.
 *
 * A kind's schemas are declared with `z.lazy`: built at their first parse,
 * not at every start of the bin or import of the package, which read a
 * configuration file of one kind or none (building them all took some 5 ms
 * of each start's CPU, by the profiles of `--version`).
 */
import { z } from 'zod'
import { parseGoDuration } from '../machinery/duration.js'

/** A Go duration string (`5m`, `1m30s`, `300ms`) read as milliseconds, as metav1.Duration is. */
export const goDuration = z.string().transform((text, ctx) => {
  const ms = parseGoDuration(text)
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `time: invalid duration ${JSON.stringify(text)}`, input: text })
    return z.NEVER
  }
  return ms
})

/** A 32-bit integer, as Go's int32 fields are. */
export const int32 = z.number().int().min(-2147483648).max(2147483647)

/*
 * Go's decoding of a config struct: a field that is absent or null holds its
 * zero value, and the kind's rules then report a missing required field in
 * upstream's words (`Required value: ...`) rather than zod's. Pointer
 * fields stay undefined instead.
 */

/** A Go string field: absent or null is "". */
export const goString = z.string().nullish().transform((v) => v ?? '')

/** A Go bool field: absent or null is false. */
export const goBool = z.boolean().nullish().transform((v) => v ?? false)

/** A Go metav1.Duration field, in milliseconds: absent or null is 0. */
export const goDurationField = goDuration.nullish().transform((v) => v ?? 0)

/** A Go slice field: absent or null is empty. */
export function goList<T extends z.ZodType>(item: T) {
  return z.array(item).nullish().transform((v) => v ?? [])
}

/** A Go struct (non-pointer) field: absent or null is the struct of zero values; unknown fields are refused. */
export function goStruct<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.preprocess((v) => v ?? {}, z.strictObject(shape))
}

/** A Go pointer field: absent or null is undefined (nil). */
export function goPointer<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => v ?? undefined)
}
