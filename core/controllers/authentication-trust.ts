/**
 * The `extension-apiserver-authentication` ConfigMap in kube-system, as
 * upstream's cluster-authentication-trust controller keeps it: the client CA
 * and the front-proxy settings, which extension API servers read to trust
 * this server's clients and the proxy. Written at start-up, and again when
 * the runtime reports rotated CA files; lists are JSON texts, CA bundles
 * PEM, as upstream writes them.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import { ADMIN_IDENTITY } from '../machinery/identities.js'
import type { AuthenticationOptions } from '../authn/authentication-options.js'
import type { StoredResources } from './stored-resources.js'
import { configMaps } from '../resources/core/configmaps.js'
import type { KubeObject } from '../machinery/object.js'

export const AUTHENTICATION_TRUST_NAMESPACE = 'kube-system'
export const AUTHENTICATION_TRUST_NAME = 'extension-apiserver-authentication'

/** The ConfigMap's data; undefined when there is nothing to publish (no CA of either kind). */
export function authenticationTrustData(auth: AuthenticationOptions): Record<string, string> | undefined {
  const data: Record<string, string> = {}
  if (auth.clientCA) data['client-ca-file'] = auth.clientCA
  const proxy = auth.requestHeader
  if (proxy?.clientCA) {
    data['requestheader-client-ca-file'] = proxy.clientCA
    data['requestheader-username-headers'] = JSON.stringify(proxy.usernameHeaders)
    data['requestheader-uid-headers'] = JSON.stringify(proxy.uidHeaders ?? [])
    data['requestheader-group-headers'] = JSON.stringify(proxy.groupHeaders ?? [])
    data['requestheader-extra-headers-prefix'] = JSON.stringify(proxy.extraHeaderPrefixes ?? [])
    data['requestheader-allowed-names'] = JSON.stringify(proxy.allowedNames ?? [])
  }
  return Object.keys(data).length > 0 ? data : undefined
}

function sameData(stored: unknown, data: Record<string, string>): boolean {
  if (typeof stored !== 'object' || stored === null) return false
  const entries = Object.entries(stored as Record<string, unknown>)
  return entries.length === Object.keys(data).length && entries.every(([k, v]) => data[k] === v)
}

/** Creates the ConfigMap, or replaces its data when it differs (a CA rotated between starts, a flag changed). */
export async function publishAuthenticationTrust(stores: StoredResources, auth: AuthenticationOptions, now: () => Date): Promise<void> {
  const data = authenticationTrustData(auth)
  if (!data) return
  const store = stores.store(configMaps)
  const ctx = { user: ADMIN_IDENTITY, now: now(), dryRun: false }
  let current: KubeObject | undefined
  try {
    current = await store.get(AUTHENTICATION_TRUST_NAMESPACE, AUTHENTICATION_TRUST_NAME)
  } catch (err) {
    if (!hasStatusCode(err, 404)) throw err
  }
  if (current && sameData(current['data'], data)) return
  if (!current) {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: AUTHENTICATION_TRUST_NAME, namespace: AUTHENTICATION_TRUST_NAMESPACE }, data }
    try {
      await store.create(AUTHENTICATION_TRUST_NAMESPACE, body, ctx)
      return
    } catch (err) {
      // Another server sharing the storage created it first: bring its data up to date below.
      if (!hasStatusCode(err, 409)) throw err
    }
  }
  await store.update(AUTHENTICATION_TRUST_NAMESPACE, AUTHENTICATION_TRUST_NAME, (obj) => ({ ...obj, data }), ctx)
}

/** CA bundles read again from their files (`--client-ca-file`, `--requestheader-client-ca-file`). */
export interface ClientCABundleUpdate {
  clientCA?: string
  requestHeaderCA?: string
}

/** The options with the rotated bundles in place of the ones given at start; the front proxy's other settings stay. */
export function withClientCAs(auth: AuthenticationOptions, bundles: ClientCABundleUpdate): AuthenticationOptions {
  const next: AuthenticationOptions = { ...auth }
  if (bundles.clientCA !== undefined) next.clientCA = bundles.clientCA
  if (bundles.requestHeaderCA !== undefined && auth.requestHeader) next.requestHeader = { ...auth.requestHeader, clientCA: bundles.requestHeaderCA }
  return next
}
