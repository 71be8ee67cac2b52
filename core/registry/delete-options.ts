/**
 * The DeleteOptions of a delete or deletecollection request. Clients put
 * them in the body (kubectl, client-go and client-node send a DeleteOptions
 * object, `dryRun: ["All"]` included) or in the query (`?dryRun=All`,
 * `?gracePeriodSeconds=0`). Upstream reads the body when there is one and
 * the query otherwise, so an option in the query of a request with a body is
 * silently dropped: a `?dryRun=All` beside a body deletes for real. Here both
 * sources count; an option both give must say the same in each, else 400.
 */
import { goJsonKind } from '../machinery/go-format.js'
import { badRequest } from '../machinery/status-error.js'
import { isPlainObject } from '../machinery/object.js'
import { typeTable } from '../resources/schema/index.js'
import { decodeAs } from '../resources/schema/json-decoding.js'
import type { Preconditions } from '../storage/interface.js'
import type { DeleteOptions } from './deletion.js'

const DELETE_OPTIONS_TYPE = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions'

/** The options a source may give; `preconditions` exist only in a body (upstream has no query parameter for them). */
type OptionName = 'dryRun' | 'gracePeriodSeconds' | 'propagationPolicy' | 'orphanDependents'
const OPTION_NAMES: readonly OptionName[] = ['dryRun', 'gracePeriodSeconds', 'propagationPolicy', 'orphanDependents']

/** Whether the options ask for a dry run (validation has already refused any value but `All`). */
export const isDryRun = (options: DeleteOptions): boolean => (options.dryRun?.length ?? 0) > 0

/**
 * The query's DeleteOptions as upstream's parameter codec reads them: an
 * empty value is unset; a boolean is false only for `false` or `0`.
 */
export function queryDeleteOptions(params: URLSearchParams): DeleteOptions {
  const options: DeleteOptions = {}
  const dryRun = params.getAll('dryRun')
  if (dryRun.length) options.dryRun = dryRun
  const grace = params.get('gracePeriodSeconds')
  if (grace) options.gracePeriodSeconds = parseInt64(grace)
  const policy = params.get('propagationPolicy')
  if (policy) options.propagationPolicy = policy
  const orphan = params.get('orphanDependents')
  if (orphan !== null) options.orphanDependents = !['false', '0'].includes(orphan.toLowerCase())
  return options
}

/** Go's strconv.ParseInt, whose error upstream answers with 400. */
function parseInt64(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`)
  const value = BigInt(text)
  if (value > 2n ** 63n - 1n || value < -(2n ** 63n)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`)
  return Number(value)
}

/**
 * A decoded body as a DeleteOptions: any apiVersion is taken (clients send
 * their group's), another kind is refused as upstream's decoder refuses it,
 * a value of the wrong type is a 400, unknown fields are ignored.
 */
export function bodyDeleteOptions(body: unknown): DeleteOptions {
  if (body === null) return {}
  if (!isPlainObject(body))
    throw badRequest(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonKind(body)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    )
  const kind = typeof body['kind'] === 'string' ? body['kind'] : ''
  const apiVersion = typeof body['apiVersion'] === 'string' && body['apiVersion'] ? body['apiVersion'] : 'meta.k8s.io/v1'
  if (kind && kind !== 'DeleteOptions')
    throw badRequest(
      `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:27"`,
    )
  const def = typeTable[DELETE_OPTIONS_TYPE]
  if (def) decodeAs(body, def, typeTable, 'DeleteOptions', apiVersion.slice(apiVersion.indexOf('/') + 1))
  const options: DeleteOptions = {}
  if (Array.isArray(body['dryRun']) && body['dryRun'].length) options.dryRun = body['dryRun'].map(String)
  if (typeof body['gracePeriodSeconds'] === 'number') options.gracePeriodSeconds = body['gracePeriodSeconds']
  if (typeof body['propagationPolicy'] === 'string' && body['propagationPolicy']) options.propagationPolicy = body['propagationPolicy']
  if (typeof body['orphanDependents'] === 'boolean') options.orphanDependents = body['orphanDependents']
  const pre = body['preconditions']
  if (isPlainObject(pre)) {
    const preconditions: Preconditions = {}
    if (typeof pre['uid'] === 'string' && pre['uid']) preconditions.uid = pre['uid']
    if (typeof pre['resourceVersion'] === 'string' && pre['resourceVersion']) preconditions.resourceVersion = pre['resourceVersion']
    options.preconditions = preconditions
  }
  return options
}

/** The body's options with the query's added; an option given by both with different values is a 400. */
export function mergeDeleteOptions(fromBody: DeleteOptions, fromQuery: DeleteOptions): DeleteOptions {
  const merged: DeleteOptions = { ...fromBody }
  for (const name of OPTION_NAMES) {
    const inQuery = fromQuery[name]
    if (inQuery === undefined) continue
    const inBody = fromBody[name]
    if (inBody !== undefined && !sameOption(inBody, inQuery))
      throw badRequest(
        `DeleteOptions disagree: ${name} is ${JSON.stringify(inBody)} in the request body and ${JSON.stringify(inQuery)} in the query`,
      )
    Object.assign(merged, { [name]: inQuery })
  }
  return merged
}

/** Equal values; for dryRun the same set of directives (`All` twice is still `All`). */
function sameOption(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    const left = [...new Set(a)].sort()
    const right = [...new Set(b)].sort()
    return left.length === right.length && left.every((v, i) => v === right[i])
  }
  return a === b
}
