/**
 * What no header value may carry on the wire: the control characters but a
 * tab, and DEL. Node refuses such a value when it writes an answer's headers
 * (after the handler's work is done); Go's header writer sends a CR or LF as
 * a space and the rest raw. The server sends each of them as a space.
 */
const UNWRITABLE = /[\x00-\x08\x0a-\x1f\x7f]/
const UNWRITABLE_ALL = /[\x00-\x08\x0a-\x1f\x7f]/g

/** Whether `value` holds a character no header value may carry. */
export function hasUnwritableHeaderCharacter(value: string): boolean {
  return UNWRITABLE.test(value)
}

/** `value` with each character no header value may carry as a space. */
export function writableHeaderValue(value: string): string {
  return value.replace(UNWRITABLE_ALL, ' ')
}
