/**
 * A delete request's DeleteOptions, read from its body and its query
 * (core/registry/delete-options.ts says how the two are merged).
 */
import { decodeBody, readBodyBytes } from '../http/body.js'
import type { YamlDecoder } from '../http/yaml-off-thread.js'
import { bodyDeleteOptions, mergeDeleteOptions, queryDeleteOptions } from '../registry/delete-options.js'
import { type DeleteOptions, validateDeleteOptions } from '../registry/deletion.js'

/**
 * Reads, merges and validates the options of a delete: the body's and the
 * query's, refusing a disagreement (400), then upstream's ValidateDeleteOptions (422).
 */
export async function readDeleteOptions(request: Request, params: URLSearchParams, maxBodyBytes: number, yaml?: YamlDecoder): Promise<DeleteOptions> {
  const fromQuery = queryDeleteOptions(params)
  const bytes = await readBodyBytes(request, maxBodyBytes)
  const fromBody = bytes.byteLength > 0 ? bodyDeleteOptions(await decodeBody(request.headers.get('content-type'), bytes, yaml)) : {}
  const options = mergeDeleteOptions(fromBody, fromQuery)
  validateDeleteOptions(options)
  return options
}
