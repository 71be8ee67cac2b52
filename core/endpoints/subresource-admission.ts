/**
 * Admission for the subresources whose handlers write nothing through the
 * store (which admits every create, update and delete itself): a CONNECT
 * (exec, attach, port-forward, proxy) and a TokenRequest. Each runs the
 * mutating plugins, then the validating ones, with the attributes upstream
 * builds for it, before anything reaches a node agent or is signed.
 */
import type { TokenRequestAdmission } from '../authn/serviceaccount/token-request.js'
import type { RequestInfo } from '../machinery/request-info.js'
import type { KubeObject } from '../machinery/object.js'
import type { ResourceEntry } from '../resources/catalogue.js'
import { runMutatingAdmission, runValidatingAdmission } from '../registry/admission-step.js'
import { connectOptions } from './connect-options.js'
import type { Registry } from '../registry/registry.js'
import type { RequestContext } from '../registry/request-context.js'

/**
 * Admits a CONNECT to `info`'s subresource, as upstream's connect handler
 * does: operation CONNECT, the options object decoded from the query as
 * the object, no operation options, never a dry run. Throws the refusal
 * (403 from a webhook or policy, 400 for a query that does not decode).
 */
export async function admitConnect(registry: Registry, entry: ResourceEntry, info: RequestInfo, params: URLSearchParams, ctx: RequestContext): Promise<void> {
  const options = connectOptions(info, params)
  await registry.admit(entry, { operation: 'CONNECT', object: options, subresource: info.subresource, namespace: info.namespace, name: info.name }, { ...ctx, dryRun: false })
}

/**
 * The admission of `serviceaccounts/<name>/token`: operation CREATE on
 * `serviceaccounts`, subresource `token`, the TokenRequest as the object
 * and the service account's name, with the request's dryRun. Its two
 * phases are called apart, where upstream's TokenREST calls them.
 */
export function tokenRequestAdmission(registry: Registry, entry: ResourceEntry, info: RequestInfo, ctx: RequestContext): TokenRequestAdmission {
  const step = (object: KubeObject) => ({ operation: 'CREATE' as const, object, subresource: 'token', namespace: info.namespace, name: info.name })
  return {
    mutate: (request) => runMutatingAdmission(registry.admission.mutating, entry, step(request), ctx),
    validate: (request) => runValidatingAdmission(registry.admission.validating, entry, step(request), ctx),
  }
}
