/**
 * Whether bytes decode as Go's encoding/json decodes them into a
 * `map[string]interface{}`, and if not, Go's error text: the syntax error
 * its scanner reports first (`invalid character 'x' looking for beginning
 * of value`, `unexpected end of JSON input`), or the type error for a valid
 * value that is not an object (`json: cannot unmarshal array into Go value
 * of type map[string]interface {}`). Upstream validates the JSON held by
 * Secrets this way and puts the error in its message, so the words must be
 * Go's, not the JavaScript parser's.
 *
 * The scan walks bytes, not characters, as Go's does: a byte that is not
 * ASCII is named as the Latin-1 character of the same code, as Go names it.
 */

/** Where a scan stands: what the next byte may be. */
type State =
  | 'value' // a value must begin (after `:`, `,` in an array, or at the start)
  | 'valueOrClose' // after `[`
  | 'key' // an object key must begin (after `,` in an object)
  | 'keyOrClose' // after `{`
  | 'afterValue' // a value ended: `,`, `:`, a closing bracket or space
  | 'string'
  | 'escape'
  | 'hex'
  | 'minus'
  | 'zero'
  | 'digits'
  | 'dot'
  | 'fraction'
  | 'exponent'
  | 'exponentSign'
  | 'exponentDigits'
  | 'literal'
  | 'end'

/** Go's limit on nested arrays and objects. */
const MAX_DEPTH = 10000

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)

const SHORT_ESCAPES: Readonly<Record<number, string>> = { 0x07: '\\a', 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x0b: '\\v', 0x5c: '\\\\' }

/**
 * A byte as Go's scanner quotes it in an error: `'x'`, `'\''`, `'"'`,
 * `'\n'`, `'\x00'`, `'\u0080'`; Latin-1 letters as themselves.
 */
export function goQuotedByte(c: number): string {
  if (c === 0x27) return `'\\''`
  if (c === 0x22) return `'"'`
  const short = SHORT_ESCAPES[c]
  if (short) return `'${short}'`
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`
  // Go's strconv.IsPrint: the C1 controls, the no-break space and the soft hyphen are not printable.
  if ((c >= 0x80 && c <= 0xa0) || c === 0xad) return `'\\u${c.toString(16).padStart(4, '0')}'`
  return `'${String.fromCharCode(c)}'`
}

const invalidCharacter = (c: number, context: string): string => `invalid character ${goQuotedByte(c)} ${context}`

/** Go's syntax error for these bytes as one JSON value, or undefined when they are one. */
export function goJsonSyntaxError(bytes: Uint8Array): string | undefined {
  // What each open array or object waits for: 'k' a key, 'v' an object's value, 'a' an array element.
  const stack: string[] = []
  let state: State = 'value'
  let literal = '' // the rest of true, false or null still expected
  let literalName = ''
  let hexLeft = 0

  /** A value just ended: what may follow depends on what encloses it. */
  const afterValue = (c: number): string | undefined => {
    const top = stack[stack.length - 1]
    if (top === undefined) {
      state = 'end'
      return isSpace(c) ? undefined : invalidCharacter(c, 'after top-level value')
    }
    if (isSpace(c)) {
      state = 'afterValue'
      return undefined
    }
    if (top === 'k') {
      if (c !== 0x3a) return invalidCharacter(c, 'after object key')
      stack[stack.length - 1] = 'v'
      state = 'value'
      return undefined
    }
    if (top === 'v') {
      if (c === 0x2c) {
        stack[stack.length - 1] = 'k'
        state = 'key'
        return undefined
      }
      if (c !== 0x7d) return invalidCharacter(c, 'after object key:value pair')
    } else {
      if (c === 0x2c) {
        state = 'value'
        return undefined
      }
      if (c !== 0x5d) return invalidCharacter(c, 'after array element')
    }
    stack.pop()
    state = stack.length === 0 ? 'end' : 'afterValue'
    return undefined
  }

  const beginValue = (c: number): string | undefined => {
    if (isSpace(c)) return undefined
    switch (c) {
      case 0x7b:
      case 0x5b:
        stack.push(c === 0x7b ? 'k' : 'a')
        if (stack.length > MAX_DEPTH) return invalidCharacter(c, 'exceeded max depth')
        state = c === 0x7b ? 'keyOrClose' : 'valueOrClose'
        return undefined
      case 0x22:
        state = 'string'
        return undefined
      case 0x2d:
        state = 'minus'
        return undefined
      case 0x30:
        state = 'zero'
        return undefined
      case 0x74:
      case 0x66:
      case 0x6e:
        literalName = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null'
        literal = literalName.slice(1)
        state = 'literal'
        return undefined
    }
    if (isDigit(c)) {
      state = 'digits'
      return undefined
    }
    return invalidCharacter(c, 'looking for beginning of value')
  }

  const beginKey = (c: number): string | undefined => {
    if (isSpace(c)) return undefined
    if (c !== 0x22) return invalidCharacter(c, 'looking for beginning of object key string')
    state = 'string'
    return undefined
  }

  /** After a number's integer part: a fraction, an exponent, or the number's end. */
  const afterInteger = (c: number): string | undefined => {
    if (c === 0x2e) state = 'dot'
    else if (c === 0x65 || c === 0x45) state = 'exponent'
    else return afterValue(c)
    return undefined
  }

  const exponentDigit = (c: number): string | undefined => {
    if (!isDigit(c)) return invalidCharacter(c, 'in exponent of numeric literal')
    state = 'exponentDigits'
    return undefined
  }

  const step = (c: number): string | undefined => {
    switch (state) {
      case 'value':
        return beginValue(c)
      case 'valueOrClose':
        if (c === 0x5d) return afterValue(c)
        return beginValue(c)
      case 'keyOrClose':
        if (c === 0x7d) {
          stack[stack.length - 1] = 'v'
          return afterValue(c)
        }
        return beginKey(c)
      case 'key':
        return beginKey(c)
      case 'afterValue':
        return afterValue(c)
      case 'end':
        return isSpace(c) ? undefined : invalidCharacter(c, 'after top-level value')
      case 'string':
        if (c === 0x22) state = 'afterValue'
        else if (c === 0x5c) state = 'escape'
        else if (c < 0x20) return invalidCharacter(c, 'in string literal')
        return undefined
      case 'escape':
        if (c === 0x75) {
          state = 'hex'
          hexLeft = 4
          return undefined
        }
        if (!'bfnrt\\/"'.includes(String.fromCharCode(c))) return invalidCharacter(c, 'in string escape code')
        state = 'string'
        return undefined
      case 'hex':
        if (!isHex(c)) return invalidCharacter(c, 'in \\u hexadecimal character escape')
        hexLeft--
        if (hexLeft === 0) state = 'string'
        return undefined
      case 'minus':
        if (c === 0x30) state = 'zero'
        else if (isDigit(c)) state = 'digits'
        else return invalidCharacter(c, 'in numeric literal')
        return undefined
      case 'digits':
        if (isDigit(c)) return undefined
        return afterInteger(c)
      case 'zero':
        return afterInteger(c)
      case 'dot':
        if (!isDigit(c)) return invalidCharacter(c, 'after decimal point in numeric literal')
        state = 'fraction'
        return undefined
      case 'fraction':
        if (isDigit(c)) return undefined
        if (c === 0x65 || c === 0x45) {
          state = 'exponent'
          return undefined
        }
        return afterValue(c)
      case 'exponent':
        if (c === 0x2b || c === 0x2d) {
          state = 'exponentSign'
          return undefined
        }
        return exponentDigit(c)
      case 'exponentSign':
        return exponentDigit(c)
      case 'exponentDigits':
        if (isDigit(c)) return undefined
        return afterValue(c)
      case 'literal': {
        const expected = literal.charCodeAt(0)
        if (c !== expected) return invalidCharacter(c, `in literal ${literalName} (expecting '${literal[0]}')`)
        literal = literal.slice(1)
        if (literal === '') state = 'afterValue'
        return undefined
      }
    }
  }

  for (const c of bytes) {
    const error = step(c)
    if (error) return error
  }
  // The end of input: a number still open ends here, as a space would end it.
  const ended = (): boolean => state === 'end'
  if (ended()) return undefined
  const error = step(0x20)
  if (error) return error
  return ended() ? undefined : 'unexpected end of JSON input'
}

/**
 * Go's error for json.Unmarshal of these bytes into a map[string]interface{},
 * or undefined when it succeeds (an object, or null).
 */
export function goJsonObjectError(bytes: Uint8Array): string | undefined {
  const syntax = goJsonSyntaxError(bytes)
  if (syntax) return syntax
  let first = 0
  while (first < bytes.length && isSpace(bytes[first] ?? 0)) first++
  const c = bytes[first]
  if (c === 0x7b || c === 0x6e) return undefined
  const kind = c === 0x5b ? 'array' : c === 0x22 ? 'string' : c === 0x74 || c === 0x66 ? 'bool' : 'number'
  return `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`
}
