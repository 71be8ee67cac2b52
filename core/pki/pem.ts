/**
 * PEM and base64 with Web APIs only (btoa/atob), so core runs unchanged on
 * Node, Bun, Deno and workers.
 */

export function base64Encode(bytes: Uint8Array): string {
  let binary = ''
  // Chunked: String.fromCharCode(...bytes) overflows the stack on large input.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  }
  return btoa(binary)
}

export function base64Decode(text: string): Uint8Array {
  const binary = atob(text.replace(/\s+/g, ''))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** UTF-8 text as base64: what kubeconfig's `*-data` fields hold. */
export function base64EncodeText(text: string): string {
  return base64Encode(new TextEncoder().encode(text))
}

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
    blocks.push({ label, der: base64Decode(body) })
  }
  return blocks
}
