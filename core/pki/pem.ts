/** PEM armour around DER, with Web APIs only (base64 from ../machinery/base64.ts). */
import { base64Decode, base64Encode } from '../machinery/base64.js'

export function pemEncode(label: string, der: ArrayBuffer | Uint8Array): string {
  const body = base64Encode(der instanceof Uint8Array ? der : new Uint8Array(der))
  const lines = body.match(/.{1,64}/g) ?? []
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`
}

export interface PemBlock {
  label: string
  der: Uint8Array
}

/** Every PEM block in `text`, in order; text between blocks is ignored, as Go's pem.Decode does. */
export function pemDecodeAll(text: string): PemBlock[] {
  const blocks: PemBlock[] = []
  const re = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g
  for (const match of text.matchAll(re)) {
    const [, label = '', body = ''] = match
    // Encrypted legacy PEM carries headers ("Proc-Type: ..."); not supported.
    if (body.includes(':')) throw new Error(`PEM block "${label}" has headers; encrypted keys are not supported`)
    // Any whitespace goes, not just the ASCII whitespace atob skips.
    blocks.push({ label, der: base64Decode(body.replace(/\s+/g, '')) })
  }
  return blocks
}
