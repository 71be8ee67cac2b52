/**
 * Base64 with Web APIs only (btoa/atob), so core runs unchanged on Node, Bun,
 * Deno and workers. One copy for the whole code base: PEM, Secret data,
 * protobuf `bytes` fields, continue tokens and bearer tokens all use it.
 */
import type { Checkpointed } from './time-slice.js'

/** Thrown by base64UrlDecode; `offset` is where Go's decoder would stop (its CorruptInputError). */
export class Base64Error extends Error {
  constructor(readonly offset: number) {
    super(`illegal base64 data at input byte ${offset}`)
    this.name = 'Base64Error'
  }
}

/**
 * A byte per char (for btoa, or a header value that carries bytes). Chunked:
 * String.fromCharCode(...bytes) overflows the stack on large input, and a
 * chunk's arguments are kept small enough to fit a stack already deep.
 */
export function binaryString(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x2000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x2000))
  }
  return binary
}

function fromBinary(binary: string): Uint8Array {
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** Standard base64 with padding (Go's StdEncoding). */
export function base64Encode(bytes: Uint8Array): string {
  return btoa(binaryString(bytes))
}

/**
 * Standard base64 as atob reads it (ASCII whitespace skipped, padding
 * optional); text that is not base64 throws what atob throws.
 */
export function base64Decode(text: string): Uint8Array {
  return fromBinary(atob(text))
}

/** Base64 characters decoded between two checkpoints (a multiple of 4: whole quanta). */
const DECODE_RUN = 1 << 16

/**
 * base64Decode as checkpointed work (see time-slice.ts), for text of
 * megabytes: decoding 50 MiB at once held the thread for seconds. Padding
 * may only end the text; `\r` and `\n` are skipped as Go skips them. Text
 * that is not base64 yields undefined.
 */
export function* base64DecodeInSteps(text: string): Checkpointed<Uint8Array | undefined> {
  // Other whitespace, which atob would skip inside a run, would shift every run after it: Go refuses it too.
  if (/[\t\f ]/.test(text)) return undefined
  const clean = /[\r\n]/.test(text) ? text.replace(/[\r\n]+/g, '') : text
  const padding = clean.indexOf('=')
  if (padding >= 0 && padding < clean.length - 2) return undefined
  if (clean.length % 4 === 1) return undefined
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4) - (clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0))
  let at = 0
  for (let i = 0; i < clean.length; i += DECODE_RUN) {
    let binary: string
    try {
      binary = atob(clean.slice(i, i + DECODE_RUN))
    } catch {
      return undefined
    }
    for (let k = 0; k < binary.length; k++) out[at++] = binary.charCodeAt(k)
    yield
  }
  return at === out.length ? out : out.subarray(0, at)
}

/**
 * Standard base64 exactly as Go's StdEncoding.DecodeString reads it: padding
 * required, `\r` and `\n` skipped, anything else outside the alphabet refused
 * with a Base64Error at its offset. Config files (encryption keys, kubeconfig
 * `*-data` fields) must decode here as they do upstream, so a key that
 * upstream refuses is refused here too.
 */
export function base64DecodeStrict(text: string): Uint8Array {
  const data = [...text].map((c, at) => ({ c, at })).filter(({ c }) => c !== '\r' && c !== '\n')
  let clean = ''
  for (let k = 0; k < data.length; k++) {
    const { c, at } = data[k] ?? { c: '', at: 0 }
    const place = k % 4
    if (c !== '=') {
      if (!/[A-Za-z0-9+/]/.test(c)) throw new Base64Error(at)
      clean += c
      continue
    }
    // Padding fills the last one or two places of the final quantum, and nothing follows it.
    if (place < 2) throw new Base64Error(at)
    if (place === 2 && data[k + 1]?.c !== '=') throw new Base64Error(at)
    const end = place === 2 ? k + 2 : k + 1
    if (end < data.length) throw new Base64Error(data[end]?.at ?? at)
    return fromBinary(atob(clean))
  }
  if (data.length % 4 !== 0) throw new Base64Error(data[data.length - (data.length % 4)]?.at ?? 0)
  return fromBinary(atob(clean))
}

/** UTF-8 text as standard base64: kubeconfig's `*-data` fields, Secret stringData. */
export function base64EncodeText(text: string): string {
  return base64Encode(new TextEncoder().encode(text))
}

/** URL-safe base64 without padding (Go's RawURLEncoding). */
export function base64UrlEncode(bytes: Uint8Array): string {
  return base64Encode(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/**
 * URL-safe base64 without padding, strictly: any character outside the
 * alphabet (padding included) throws a Base64Error at its offset.
 */
export function base64UrlDecode(text: string): Uint8Array {
  const bad = text.search(/[^A-Za-z0-9_-]/)
  if (bad >= 0) throw new Base64Error(bad)
  if (text.length % 4 === 1) throw new Base64Error(text.length - 1)
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4)
  let binary: string
  try {
    binary = atob(padded)
  } catch {
    throw new Base64Error(0)
  }
  return fromBinary(binary)
}

/** Standard base64 (with padding) as Go's encoding/base64.StdEncoding reads it, for validation. */
const STD_ALPHABET = /^[A-Za-z0-9+/]$/

/** The index of the first byte Go's decoder would refuse, or -1 when the text is valid. */
export function illegalBase64Index(text: string): number {
  if (text.length % 4 !== 0) {
    // Go reports the offset where the incomplete quantum starts.
    for (let i = 0; i < text.length; i++) if (!STD_ALPHABET.test(text[i] ?? '')) return i
    return text.length - (text.length % 4)
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? ''
    if (STD_ALPHABET.test(c)) continue
    const padding = c === '=' && (i === text.length - 1 || (i === text.length - 2 && text[i + 1] === '='))
    if (!padding) return i
  }
  return -1
}
