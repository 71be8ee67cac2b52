/** Admission attributes and object indexes for the plugin tables: a request as the registry hands it over. */
import type { AdmissionAttributes, AdmissionOperation } from '../../../core/admission/attributes.js'
import type { ObjectReader } from '../../../core/client/informer.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { StatusError } from '../../../core/machinery/status-error.js'

export function attrs(
  entry: ResourceEntry,
  operation: AdmissionOperation,
  object: Record<string, unknown> | undefined,
  more: Partial<AdmissionAttributes> = {},
): AdmissionAttributes {
  const obj = object as KubeObject | undefined
  return {
    operation,
    entry,
    namespace: entry.namespaced ? (obj?.metadata?.namespace ?? 'default') : '',
    name: obj?.metadata?.name ?? '',
    ...(obj ? { object: structuredClone(obj) } : {}),
    dryRun: false,
    user: { username: 'alice', groups: ['system:authenticated'] },
    warnings: [],
    ...more,
  }
}

/** A fixed set of objects as a plugin's index. */
export function index(objects: Record<string, unknown>[]): ObjectReader {
  const all = objects as KubeObject[]
  const get = (namespace: string, name: string) => all.find((o) => (o.metadata.namespace ?? '') === namespace && o.metadata.name === name)
  return {
    get,
    list: (namespace) => (namespace === undefined ? all : all.filter((o) => (o.metadata.namespace ?? '') === namespace)),
    read: async (namespace, name) => get(namespace, name),
  }
}

/** The StatusError a call throws (code and message), or undefined when it passes. */
export async function refusal(run: () => unknown): Promise<{ code: number; message: string } | undefined> {
  try {
    await run()
    return undefined
  } catch (err) {
    if (!(err instanceof StatusError)) throw err
    return { code: err.code, message: err.message }
  }
}

export const pod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', ...metadata },
  spec,
})
