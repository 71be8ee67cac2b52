/**
 * apiextensions.k8s.io/v1 defaults for a CustomResourceDefinition (upstream's
 * SetDefaults_CustomResourceDefinition and SetDefaults_ServiceReference), and
 * the wire form upstream's v1 encoder writes: `served` and `storage` always
 * present, `preserveUnknownFields` and `deprecated` only when true.
 */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import type { CustomResourceDefinition } from './types.js'

const record = (value: unknown): Record<string, unknown> | undefined => (isPlainObject(value) ? value : undefined)

/** The boolean fields a v1 client always reads back, and the ones it reads back only when set. */
export function normalizeCrd(obj: KubeObject): void {
  const spec = record(obj['spec'])
  if (!spec) return
  if (spec['preserveUnknownFields'] === false) delete spec['preserveUnknownFields']
  if (!Array.isArray(spec['versions'])) return
  for (const version of spec['versions']) {
    const v = record(version)
    if (!v) continue
    v['served'] ??= false
    v['storage'] ??= false
    if (v['deprecated'] === false) delete v['deprecated']
  }
}

export function applyCrdDefaults(obj: KubeObject): void {
  const crd = obj as CustomResourceDefinition
  const spec = record(crd.spec)
  if (!spec) return
  const names = record(spec['names'])
  if (names) {
    const kind = typeof names['kind'] === 'string' ? names['kind'] : ''
    if (!names['singular']) names['singular'] = kind.toLowerCase()
    if (!names['listKind'] && kind) names['listKind'] = `${kind}List`
  }
  if (!isPlainObject(spec['conversion'])) spec['conversion'] = { strategy: 'None' }
  const service = record(record(record(record(spec['conversion'])?.['webhook'])?.['clientConfig'])?.['service'])
  if (service) service['port'] ??= 443
  defaultStoredVersions(crd)
}

/** A status without stored versions names the storage version (upstream defaults it on every decode). */
function defaultStoredVersions(crd: CustomResourceDefinition): void {
  if (crd.status?.storedVersions?.length) return
  const versions = Array.isArray(crd.spec.versions) ? crd.spec.versions : []
  const storage = versions.find((v) => isPlainObject(v) && v.storage === true)
  if (!storage) return
  const status = isPlainObject(crd.status) ? crd.status : (crd.status = {})
  status.storedVersions = [storage.name]
}
