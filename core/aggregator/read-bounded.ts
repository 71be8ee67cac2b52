/**
 * Reads an extension server's answer up to a size: what the aggregator
 * keeps from another server (a discovery document, an OpenAPI document) is
 * bounded, so a hostile or broken one cannot fill this server's memory.
 */
import { joinedBytes } from '../machinery/joined-bytes.js'

/** The body as text, or undefined when it is absent or larger than `maxBytes` (the rest is not read). */
export async function readBounded(response: Response, maxBytes: number): Promise<string | undefined> {
  if (!response.body) return undefined
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > maxBytes) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(joinedBytes(chunks, size))
}
