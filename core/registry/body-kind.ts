/**
 * A built-in resource's body that names another kind or version, refused
 * as upstream's decoder refuses it. Upstream decodes the body as the kind
 * it names, defaulting an empty or missing apiVersion or kind from the URL,
 * and then converts it to the resource's internal type: a kind its scheme
 * does not know in that version is `no kind "X" is registered for version
 * "G/V"`, a known one of another type has `unknown conversion`, both
 * prefixed `X in version "V" cannot be handled as a <Kind>`. Only another
 * version of the same kind converts, to be refused afterwards because the
 * endpoint does not serve that version (store.ts says so).
 */
import { badRequest, type StatusError } from '../machinery/status-error.js'
import { goInternalPackage, versionOf } from './go-type-names.js'

/** Where upstream's scheme of built-in kinds is declared, as its decoder names it. */
const LEGACY_SCHEME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30'

/** Whether the built-in kinds know `kind` in `apiVersion` (served by this server). */
export type KindRegistered = (apiVersion: string, kind: string) => boolean

/** The group of an apiVersion (`apps/v1` → `apps`; `v1` → the legacy group, ''). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? '' : apiVersion.slice(0, slash)
}

/**
 * Upstream's refusal of a body naming `apiVersion` and `kind` (empty ones
 * already taken from the URL) where `target` (a resource's kind in its
 * served version, or a subresource's, as autoscaling/v1 Scale) is decoded;
 * undefined when the body names the target's kind in its group.
 */
export function otherKindError(apiVersion: string, kind: string, target: { apiVersion: string; kind: string }, registered: KindRegistered): StatusError | undefined {
  // The target itself, whether or not the catalogue serves it (a store the server writes itself, a Scale).
  if (kind === target.kind && apiVersion === target.apiVersion) return undefined
  const group = groupOf(target.apiVersion)
  if (kind === target.kind && groupOf(apiVersion) === group && registered(apiVersion, kind)) return undefined
  const prefix = `${kind} in version ${JSON.stringify(versionOf(apiVersion))} cannot be handled as a ${target.kind}: `
  if (!registered(apiVersion, kind)) {
    return badRequest(`${prefix}no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme ${JSON.stringify(LEGACY_SCHEME)}`)
  }
  return badRequest(`${prefix}converting (${versionOf(apiVersion)}.${kind}) to (${goInternalPackage(group)}.${target.kind}): unknown conversion`)
}
