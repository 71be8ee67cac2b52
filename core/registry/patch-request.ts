/**
 * A PATCH request's body as a function from the current object to the next
 * one, by its Content-Type: JSON patch (RFC 6902), JSON merge patch
 * (RFC 7386), or strategic merge patch for kinds with a type in the tables
 * (upstream refuses it for custom resources with 415).
 */
import { readBodyBytes } from '../http/body.js'
import { duplicateJsonFields } from '../http/duplicate-fields.js'
import { essence, JSON_PATCH_TYPE, MERGE_PATCH_TYPE, STRATEGIC_MERGE_PATCH_TYPE } from '../http/media-types.js'
import { badRequest, StatusError, unsupportedMediaType } from '../http/status-error.js'
import { applyStrategicMergePatch } from '../patch/strategic-merge.js'
import { PatchError } from '../patch/errors.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../resources/object.js'
import { typeTable } from '../resources/schema/index.js'
import { invalidError } from '../validation/field.js'
import { applyJsonPatch, mergePatch, parseJsonPatch } from './json-patch.js'
import type { RequestContext } from './request-context.js'

export type PatchFunction = (current: KubeObject) => unknown

/** The patch types `entry` accepts, in the order a 415 lists them. */
export function patchTypes(entry: ResourceEntry): string[] {
  const types = [JSON_PATCH_TYPE, MERGE_PATCH_TYPE]
  if (typeTable[entry.typeName]) types.push(STRATEGIC_MERGE_PATCH_TYPE)
  return types
}

/** A failed strategic merge as upstream answers it: 400 for malformed directives, 422 otherwise. */
function patchFailure(err: unknown): unknown {
  if (!(err instanceof PatchError)) return err
  if (err.kind === 'BadRequest') return badRequest(err.message)
  if (err.causes.length) return invalidError('', '', '', err.causes)
  return new StatusError(422, 'Invalid', err.message)
}

export async function patchFunction(
  request: Request,
  entry: ResourceEntry,
  maxBodyBytes: number,
  ctx: RequestContext,
): Promise<PatchFunction> {
  const type = essence(request.headers.get('content-type'))
  const accepted = patchTypes(entry)
  if (!accepted.includes(type)) throw unsupportedMediaType(type, accepted)
  const text = new TextDecoder().decode(await readBodyBytes(request, maxBodyBytes))
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`)
  }
  ctx.bodyProblems = duplicateJsonFields(text).map((path) => `duplicate field ${JSON.stringify(path)}`)
  if (type === JSON_PATCH_TYPE) {
    const ops = parseJsonPatch(doc)
    return (current) => applyJsonPatch(current, ops)
  }
  if (!isPlainObject(doc)) throw badRequest('json: cannot unmarshal non-object into a merge patch')
  if (type === MERGE_PATCH_TYPE) return (current) => mergePatch(current, doc)
  return (current) => {
    try {
      return applyStrategicMergePatch(current, doc, entry.typeName)
    } catch (err) {
      throw patchFailure(err)
    }
  }
}
