/**
 * PEM read the way Go's encoding/pem reads it, for the certificate fields
 * whose rules upstream words after what Go's decoder finds: the first
 * block that parses (a malformed one is skipped, not an error), its
 * headers kept, the text after it left for the next call. The PKI code's
 * pemDecodeAll is stricter and has no headers; these rules need Go's
 * leniency exactly.
 */
import { base64DecodeStrict } from '../../machinery/base64.js'
import { GoLiteral } from '../../machinery/go-format.js'

export interface GoPemBlock {
  type: string
  headers: Record<string, string>
  bytes: Uint8Array
}

const decoder = new TextDecoder('latin1')
const encoder = new TextEncoder()

/** One line and what follows it; the line without its end of line or trailing spaces and tabs. */
function line(text: string): [string, string] {
  const end = text.indexOf('\n')
  const [head, rest] = end < 0 ? [text, ''] : [text.slice(0, end), text.slice(end + 1)]
  return [head.replace(/[ \t\r]+$/, ''), rest]
}

/** Go's pem.Decode: the first well-formed block in `data` and the rest after it, or undefined. */
export function decodePemBlock(data: Uint8Array): { block: GoPemBlock; rest: Uint8Array } | undefined {
  // Bytes as characters one for one, so that offsets into the text are offsets into the data.
  const text = decoder.decode(data)
  let rest = text
  for (;;) {
    // A block begins at the start of the data or of a line.
    if (rest.startsWith('-----BEGIN ')) rest = rest.slice('-----BEGIN '.length)
    else {
      const at = rest.indexOf('\n-----BEGIN ')
      if (at < 0) return undefined
      rest = rest.slice(at + '\n-----BEGIN '.length)
    }
    const [typeLine, afterType] = line(rest)
    if (!typeLine.endsWith('-----')) continue
    const type = typeLine.slice(0, -'-----'.length)
    const headers: Record<string, string> = {}
    let body = afterType
    for (;;) {
      if (body === '') break
      const [headerLine, next] = line(body)
      const colon = headerLine.indexOf(':')
      if (colon < 0) break
      headers[headerLine.slice(0, colon).trim()] = headerLine.slice(colon + 1).trim()
      body = next
    }
    // With no headers the end line may follow the begin line at once.
    const endMarker = `-----END ${type}-----`
    let endAt: number
    let base64Text: string
    if (Object.keys(headers).length === 0 && body.startsWith('-----END ')) {
      endAt = 0
      base64Text = ''
    } else {
      endAt = body.indexOf('\n-----END ')
      if (endAt < 0) continue
      base64Text = body.slice(0, endAt + 1)
      endAt += 1
    }
    const [endLine, after] = line(body.slice(endAt))
    if (endLine !== endMarker) continue
    let bytes: Uint8Array
    try {
      bytes = base64DecodeStrict(base64Text.replace(/[ \t\r\n]/g, ''))
    } catch {
      continue
    }
    const consumed = text.length - after.length
    return { block: { type, headers, bytes }, rest: data.subarray(consumed) }
  }
}

/** The bytes of a `[]byte` field from its JSON form (standard base64); absent is Go's nil slice. */
export function jsonBytes(v: unknown): Uint8Array | undefined {
  if (typeof v !== 'string') return undefined
  try {
    return base64DecodeStrict(v)
  } catch {
    // The decoder refuses such a body before validation; read it as text for the message's sake.
    return encoder.encode(v)
  }
}

/** `%#v` of a Go byte slice: `[]byte{0x2d, 0xa}`, `[]byte{}`, or `[]byte(nil)` for an absent one. */
export function goBytes(bytes: Uint8Array | undefined): GoLiteral {
  if (bytes === undefined) return new GoLiteral('[]byte(nil)')
  return new GoLiteral(`[]byte{${Array.from(bytes, (b) => `0x${b.toString(16)}`).join(', ')}}`)
}
