/**
 * List continue tokens in upstream's format (`k8s.io/apiserver/pkg/storage`
 * EncodeContinue/DecodeContinue): unpadded base64url of
 * `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<next key minus the prefix>"}`.
 * Clients treat the token as opaque, but keeping upstream's shape lets every
 * backend (memory, embedded, etcd) read the others' tokens.
 */
import { Base64Error, base64UrlDecode, base64UrlEncode } from '../machinery/base64.js'
import { decodeGoStruct } from '../machinery/go-json-struct.js'
import { StorageError } from './interface.js'

const TOKEN_VERSION = 'meta.k8s.io/v1'
const INVALID = 'continue key is not valid'

/** Upstream's marker revision: "continue at the latest revision" (handed out when the original one was compacted). */
export const CONTINUE_AT_LATEST = -1

export interface DecodedContinue {
  /** The absolute key the next page starts at (inclusive). */
  startKey: string
  /** The revision the first page was read at, or CONTINUE_AT_LATEST. */
  revision: number
}

/** A token whose next page starts at `nextKey` (absolute, under `prefix`) and reads at `revision`. */
export function encodeContinue(nextKey: string, prefix: string, revision: number): string {
  if (!nextKey.startsWith(prefix) || nextKey === prefix) {
    // A bug in the caller, not a client error: the key must lie under the listed prefix.
    throw new Error(`unable to encode next field: the key ${nextKey} and key prefix ${prefix} do not match`)
  }
  const json = JSON.stringify({ v: TOKEN_VERSION, rv: revision, start: nextKey.slice(prefix.length) })
  return base64UrlEncode(new TextEncoder().encode(json))
}

/** Reads a token for a list of `prefix`; throws StorageError InvalidContinue on anything malformed. */
export function decodeContinue(token: string, prefix: string): DecodedContinue {
  const fail = (why: string): never => {
    throw new StorageError('InvalidContinue', prefix, why)
  }
  let bytes: Uint8Array
  try {
    bytes = base64UrlDecode(token)
  } catch (err) {
    if (err instanceof Base64Error) return fail(`${INVALID}: ${err.message}`)
    throw err
  }
  // Go's json.Unmarshal into upstream's continueToken struct: its syntax and type errors, in its words.
  const decoded = decodeGoStruct(bytes, 'storage.continueToken', { v: 'string', rv: 'int64', start: 'string' })
  if ('error' in decoded) return fail(`${INVALID}: ${decoded.error}`)
  const { v: version = '', rv = 0, start = '' } = decoded.values
  // Past 2^53 a revision is far in the future of any store; it stays one as a number.
  const revision = Number(rv)
  if (version !== TOKEN_VERSION) return fail(`${INVALID}: server does not recognize this encoded version ${version}`)
  if (revision === 0) return fail(`${INVALID}: incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`)
  if (start === '') return fail(`${INVALID}: encoded start key empty (version ${TOKEN_VERSION})`)
  // Upstream cleans the key as a path and refuses anything that changes: a
  // `..` segment would otherwise let a client page outside the listed prefix.
  const rooted = start.startsWith('/') ? start : `/${start}`
  if (!isCleanPath(rooted)) return fail(`${INVALID}: ${start}`)
  // Upstream reads any revision below zero as "the latest", not only the -1 it hands out.
  return { startKey: prefix + rooted.slice(1), revision: revision < 0 ? CONTINUE_AT_LATEST : revision }
}

/** True when Go's path.Clean would leave the rooted path unchanged. */
function isCleanPath(p: string): boolean {
  if (p === '/') return true
  if (p.endsWith('/')) return false
  for (const segment of p.slice(1).split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return false
  }
  return true
}

/**
 * The token upstream hands back with a 410 for an expired continue: same
 * start key, read at the latest revision, so a client may finish the list
 * knowing it is no longer one consistent snapshot. Throws like decodeContinue.
 */
export function reissueAtLatest(token: string, prefix: string): string {
  const { startKey } = decodeContinue(token, prefix)
  return encodeContinue(startKey, prefix, CONTINUE_AT_LATEST)
}
