/**
 * zod building blocks shared by the config file kinds, so each kind states
 * its fields once and every kind words the same problem the same way.
 */
import { z } from 'zod'
import { parseGoDuration } from '../options/duration.js'

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
