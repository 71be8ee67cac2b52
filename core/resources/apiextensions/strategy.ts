/**
 * The CustomResourceDefinition strategy (upstream's customresourcedefinition
 * registry: strategy.go and the Delete of etcd.go). The status belongs to
 * the controllers, except that the version objects are written in is
 * recorded in `status.storedVersions` the moment it becomes the storage
 * version. A first delete only marks the CRD: its custom resources have to
 * go first, which a controller sees to before it drops the finalizer.
 */
import type { Strategy, StrategyContext } from '../catalogue.js'
import { formatTimestamp, isPlainObject, type KubeObject } from '../../machinery/object.js'
import { applyCrdDefaults, normalizeCrd } from './defaults.js'
import { semanticEqual } from './layout.js'
import { CUSTOM_RESOURCE_CLEANUP_FINALIZER, type CustomResourceDefinition, setCondition } from './types.js'
import { validateCrd, validateCrdUpdate } from './validation.js'
import { warmRules } from '../../crd-schema/cel-rules.js'
import { runInSlices, TimeSlice } from '../../machinery/time-slice.js'

/** Adds the storage version to `status.storedVersions` when it is not there yet. */
function recordStorageVersion(crd: CustomResourceDefinition): void {
  const versions = Array.isArray(crd.spec?.versions) ? crd.spec.versions : []
  const storage = versions.find((v) => isPlainObject(v) && v.storage === true)
  if (!storage) return
  const status = isPlainObject(crd.status) ? crd.status : (crd.status = {})
  const stored = Array.isArray(status.storedVersions) ? status.storedVersions : (status.storedVersions = [])
  if (!stored.includes(storage.name)) stored.push(storage.name)
}

export function prepareCrdForCreate(obj: KubeObject): void {
  const crd = obj as CustomResourceDefinition
  crd.status = {}
  recordStorageVersion(crd)
}

export function prepareCrdForUpdate(obj: KubeObject, old: KubeObject): void {
  const crd = obj as CustomResourceDefinition
  if (old['status'] === undefined) delete crd.status
  else crd.status = structuredClone(old['status']) as CustomResourceDefinition['status']
  recordStorageVersion(crd)
}

export const TERMINATING_MESSAGE = 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon'

/**
 * The first delete stores the CRD marked for deletion, held by the cleanup
 * finalizer and Terminating; a later one takes the generic way.
 */
export function markCrdForDeletion(obj: KubeObject, ctx: StrategyContext): KubeObject | undefined {
  if (obj.metadata.deletionTimestamp) return undefined
  const crd = obj as CustomResourceDefinition
  const now = formatTimestamp(ctx.now)
  crd.metadata.deletionTimestamp = now
  const finalizers = crd.metadata.finalizers ?? []
  if (!finalizers.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) crd.metadata.finalizers = [...finalizers, CUSTOM_RESOURCE_CLEANUP_FINALIZER]
  setCondition(crd, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: TERMINATING_MESSAGE }, now)
  return crd
}

/**
 * Compiles the CEL rules of every schema the CRD holds, a schema node at a
 * time with other requests let in between, so that its validation finds
 * them compiled (warmRules). Not for a write that leaves the spec as it
 * was (one through `/status`, whose own rule compiles nothing): a compare
 * costs far less than compiling rules the validation may not ask for.
 */
async function warmCrdRules(obj: KubeObject, old?: KubeObject): Promise<void> {
  const spec = (obj as CustomResourceDefinition).spec as unknown as Record<string, unknown> | undefined
  if (old && semanticEqual((old as CustomResourceDefinition).spec, spec)) return
  const holders = [spec?.['validation'], ...(Array.isArray(spec?.['versions']) ? spec['versions'].map((v) => (v as Record<string, unknown> | undefined)?.['schema']) : [])]
  const slice = TimeSlice.startingNow()
  for (const holder of holders) {
    if (typeof holder === 'object' && holder !== null) await runInSlices(warmRules((holder as Record<string, unknown>)['openAPIV3Schema']), slice)
  }
}

export const customResourceDefinitionStrategy: Strategy = {
  // An update must name the resourceVersion it read, as upstream's strategy asks.
  allowUnconditionalUpdate: false,
  normalize: normalizeCrd,
  applyDefaults: applyCrdDefaults,
  prepareForCreate: prepareCrdForCreate,
  prepareForUpdate: prepareCrdForUpdate,
  // Its CEL rules compiled ahead, in steps: a published CRD carries hundreds of them.
  prepareValidation: warmCrdRules,
  validate: validateCrd,
  // A write through `/status` is checked by the subresource's own rule (validateCrdStatusUpdate).
  validateUpdate: validateCrdUpdate,
  beforeDelete: markCrdForDeletion,
}
