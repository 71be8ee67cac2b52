/**
 * A PATCH request's body by its Content-Type: a function from the current
 * object to the next one for JSON patch (RFC 6902), JSON merge patch
 * (RFC 7386) and strategic merge patch, or the configuration of a
 * server-side apply. Strategic merge needs the kind's type in the tables
 * (upstream refuses it for custom resources with 415); apply takes the type
 * from the tables or, for a custom resource, from its schema.
 */
import { decodeJsonWithin, decodeUtf8, decodeYamlText, jsonDepthCheck, readBodyBytes } from '../http/body.js'
import type { YamlDecoder } from '../http/yaml-off-thread.js'
import { APPLY_PATCH_TYPE, essence, JSON_PATCH_TYPE, MERGE_PATCH_TYPE, STRATEGIC_MERGE_PATCH_TYPE } from '../http/media-types.js'
import { queryOf } from '../http/query.js'
import { queryBool } from '../machinery/query-bool.js'
import { badRequest, requestRejected, StatusError, type StatusReason, unsupportedMediaType } from '../machinery/status-error.js'
import { applyStrategicMergePatch, applyStrategicMergePatchInSteps } from '../patch/strategic-merge.js'
import { PatchError } from '../patch/errors.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { isPlainObject, type KubeObject } from '../machinery/object.js'
import { goJsonKind } from '../machinery/go-format.js'
import { typeTable } from '../resources/schema/index.js'
import { type FieldError, fieldPath, forbiddenField, invalidError, required } from '../machinery/field.js'
import { applyJsonPatch, mergePatch, mergePatchInSteps, parseJsonPatch } from '../patch/json-patch.js'
import { JsonPatchFailure } from '../patch/json-patch-document.js'
import { runInSlices, TimeSlice } from '../machinery/time-slice.js'
import type { RequestContext } from '../registry/request-context.js'
import { writeOptionErrors } from '../registry/write-options.js'
import { appendAll } from '../machinery/append-all.js'

/** The next object from the current one, or a promise of it for work done in time slices. */
export type PatchFunction = (current: KubeObject) => unknown

/** `put`: the whole object a PUT sends (`patch` gives a copy of it), not a patch of the stored one. */
export type PatchRequest = { apply: false; put?: unknown; patch: PatchFunction } | { apply: true; config: Record<string, unknown> }

/**
 * The patch types `entry` accepts, in the order a 415 lists them. Custom
 * resources take apply but not strategic merge, which needs Go's struct tags.
 */
export function patchTypes(entry: ResourceEntry): string[] {
  if (entry.schema) return [JSON_PATCH_TYPE, MERGE_PATCH_TYPE, APPLY_PATCH_TYPE]
  const types = [JSON_PATCH_TYPE, MERGE_PATCH_TYPE]
  if (typeTable[entry.typeName]) types.push(STRATEGIC_MERGE_PATCH_TYPE, APPLY_PATCH_TYPE)
  return types
}

/** PatchOptions checked as upstream's ValidatePatchOptions: 422 on the PatchOptions kind. */
function checkPatchOptions(apply: boolean, params: URLSearchParams): void {
  const errs: FieldError[] = []
  if (apply && !params.get('fieldManager')) errs.push(required(fieldPath('fieldManager'), 'is required for apply patch'))
  if (!apply && params.has('force')) errs.push(forbiddenField(fieldPath('force'), 'may not be specified for non-apply patch'))
  appendAll(errs, writeOptionErrors(params))
  if (errs.length) throw invalidError('meta.k8s.io', 'PatchOptions', '', errs)
}

/** A failed strategic merge as upstream's PATCH handler answers it (see PatchErrorKind). */
function patchFailure(err: unknown): unknown {
  if (!(err instanceof PatchError)) return err
  switch (err.kind) {
    case 'BadRequest':
      return badRequest(err.message)
    case 'Unprocessable':
      return requestRejected()
    case 'Invalid':
      return invalidError('', '', '', err.causes)
    case 'Internal':
      return new StatusError(500, '' as StatusReason, err.message)
  }
}

export async function readPatch(
  request: Request,
  entry: ResourceEntry,
  maxBodyBytes: number,
  ctx: RequestContext,
  yaml?: YamlDecoder,
): Promise<PatchRequest> {
  const type = essence(request.headers.get('content-type'))
  const accepted = patchTypes(entry)
  if (!accepted.includes(type)) throw unsupportedMediaType(type, accepted)
  const params = queryOf(request)
  checkPatchOptions(type === APPLY_PATCH_TYPE, params)
  // A patch in JSON (every type but apply's YAML) nested too deeply is refused from its first bytes.
  const json = type !== APPLY_PATCH_TYPE
  const text = await decodeUtf8(await readBodyBytes(request, maxBodyBytes, json ? jsonDepthCheck(PATCH_JSON_PREFIX) : undefined))
  if (type === APPLY_PATCH_TYPE) {
    // Upstream reads the configuration into a map, every failure 'error decoding YAML'; null (or an
    // empty body) leaves the map empty, for the apply to refuse its missing apiVersion.
    const decoded = await decodeYamlText(text, ctx.fieldValidation !== 'Ignore', yaml).catch((err: unknown) => {
      throw err instanceof StatusError && err.code === 400 ? badRequest(`error decoding YAML: ${err.message}`) : err
    })
    const { value, duplicates } = decoded
    if (value !== null && !isPlainObject(value)) throw badRequest(`error decoding YAML: error unmarshaling JSON: while decoding JSON: ${notAMap(value)}`)
    const config = value ?? {}
    if (ctx.fieldValidation !== 'Ignore') ctx.bodyProblems = duplicates
    ctx.apply = { force: queryBool(params, 'force') }
    return { apply: true, config }
  }
  return { apply: false, patch: await patchFunction(text, type, entry, ctx) }
}

/** Merge and strategic merge patches of this many characters or more are merged in steps (a few milliseconds a pass and up). */
const LARGE_PATCH_CHARS = 64 * 1024

/** What upstream puts before a JSON error in a JSON patch or a merge patch it decodes strictly. */
const PATCH_JSON_PREFIX = 'error decoding patch: '

/** Upstream's patch library's word for a merge patch that is no JSON object. */
const BAD_MERGE_PATCH = 'Invalid JSON Patch'

/** What Go's decoder says of a value that is no object where it wants a map. */
const notAMap = (value: unknown) => `json: cannot unmarshal ${goJsonKind(value)} into Go value of type map[string]interface {}`

async function patchFunction(text: string, type: string, entry: ResourceEntry, ctx: RequestContext): Promise<PatchFunction> {
  // Upstream decodes a JSON patch and a merge patch strictly first (every field validation but
  // Ignore), and words what that finds its own way; a strategic merge patch it decodes alone.
  const strict = ctx.fieldValidation !== 'Ignore'
  const prefix = strict && type !== STRATEGIC_MERGE_PATCH_TYPE ? PATCH_JSON_PREFIX : ''
  const decoded = await decodeJsonWithin(text, prefix, strict, true).catch((err: unknown) => {
    // Without the strict pass, a merge patch that is no JSON reaches the library, which says only this.
    throw type === MERGE_PATCH_TYPE && !strict && err instanceof StatusError && err.code === 400 ? badRequest(BAD_MERGE_PATCH) : err
  })
  const { value: doc, duplicates } = decoded
  if (strict) ctx.bodyProblems = duplicates
  if (type === JSON_PATCH_TYPE) {
    const ops = parseJsonPatch(doc, strict)
    ctx.patch = { strategic: false }
    return (current) =>
      applyJsonPatch(current, ops).catch((err: unknown) => {
        throw err instanceof JsonPatchFailure ? requestRejected() : err
      })
  }
  if (type === MERGE_PATCH_TYPE && !isPlainObject(doc)) {
    // null passes the strict decoding and not the library. (An array, without the strict pass, upstream
    // merges as the whole object and then fails to decode; here it is refused as the other non-objects.)
    throw badRequest(doc === null || !strict ? BAD_MERGE_PATCH : `${PATCH_JSON_PREFIX}${notAMap(doc)}`)
  }
  if (type === STRATEGIC_MERGE_PATCH_TYPE && doc !== null && !isPlainObject(doc)) throw badRequest(notAMap(doc))
  // A strategic merge patch of null changes nothing, as an empty one.
  const patch = (doc ?? {}) as Record<string, unknown>
  ctx.patch = type === STRATEGIC_MERGE_PATCH_TYPE ? { strategic: true, sent: patch } : { strategic: false }
  if (type === MERGE_PATCH_TYPE) {
    // A patch of megabytes is merged in steps, the others at once.
    if (text.length < LARGE_PATCH_CHARS) return (current) => mergePatch(current, patch)
    return (current) => runInSlices(mergePatchInSteps(current, patch), TimeSlice.startingNow())
  }
  if (text.length < LARGE_PATCH_CHARS) {
    return (current) => {
      try {
        return applyStrategicMergePatch(current, patch, entry.typeName)
      } catch (err) {
        throw patchFailure(err)
      }
    }
  }
  return (current) =>
    runInSlices(applyStrategicMergePatchInSteps(current, patch, entry.typeName), TimeSlice.startingNow()).catch((err: unknown) => {
      throw patchFailure(err)
    })
}
