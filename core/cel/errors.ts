/**
 * An evaluation error as a user reads it: the library's message on one
 * line, in cel-go's words where the two differ (a rule's 422, a policy's
 * message, an authenticator's error all quote it).
 */

/** The library's messages whose cel-go wording is fixed. */
const CEL_GO_TEXT: Readonly<Record<string, string>> = {
  'Unsigned integer overflow': 'unsigned integer overflow',
  'int() type error: integer overflow': 'integer overflow',
  'uint() type error: unsigned integer overflow': 'unsigned integer overflow',
  'modulo by zero': 'modulus by zero',
  'int() type error: cannot convert to int': "type conversion error from 'string' to 'int'",
  // uint() of a negative int says the same in the library; the meter words that one as cel-go (meter.ts).
  'uint() type error: cannot convert to uint': "type conversion error from 'string' to 'uint'",
  'double() type error: cannot convert to double': "type conversion error from 'string' to 'double'",
}

/** cel-go's text for the error `err` an evaluation threw. */
export function celErrorText(err: unknown): string {
  const e = err as { summary?: string; message?: string } | null
  const text = (e?.summary ?? e?.message ?? String(err)).split('\n')[0] ?? ''
  const fixed = CEL_GO_TEXT[text]
  if (fixed !== undefined) return fixed
  if (text.startsWith('integer overflow: ')) return 'integer overflow'
  if (text.startsWith('bool() conversion error: ')) return "type conversion error from 'string' to 'bool'"
  return text.replace(/^No such key/, 'no such key')
}
