/**
 * Seeding (`options.objects`): the objects an embedded server starts with,
 * created through the API as the administrator, so defaulting, validation
 * and admission apply as to any client's create. Custom resource
 * definitions go first and are served before their custom resources are
 * created; namespaces come next, so that objects in them are admitted.
 */
import { parseAllDocuments } from 'yaml'
import type { Catalogue } from '../resources/catalogue.js'
import type { KubeObject } from '../machinery/object.js'

/** Objects as values, or YAML/JSON text of one or more documents (`---` between them); `kind: List` documents are unpacked. */
export type SeedObjects = string | readonly (KubeObject | string)[]

/** Creates one object at `path` (a collection URL) and returns the server's answer. */
export type CreateRequest = (path: string, object: KubeObject) => Response | Promise<Response>

/** The longest wait for a seeded CRD's kinds to be served: a definition that never establishes fails start-up instead of hanging it. */
const SERVED_WAIT_MS = 30_000

/** The seed objects in creation order: CRDs, then namespaces, then the rest as given. */
export function seedObjects(objects: SeedObjects): KubeObject[] {
  const all = (typeof objects === 'string' ? [objects] : objects).flatMap((item) => (typeof item === 'string' ? parseDocuments(item) : [item])).flatMap(unpackList)
  for (const [i, obj] of all.entries()) {
    if (!obj || typeof obj !== 'object' || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
      throw new Error(`options.objects[${i}]: an object needs apiVersion and kind`)
    }
  }
  const rank = (obj: KubeObject): number => (isCrd(obj) ? 0 : obj.kind === 'Namespace' && obj.apiVersion === 'v1' ? 1 : 2)
  // A stable sort keeps the given order within each rank.
  return all.map((obj, i) => ({ obj, i })).sort((a, b) => rank(a.obj) - rank(b.obj) || a.i - b.i).map(({ obj }) => obj)
}

/** Creates `objects` (from seedObjects) in order; rejects, naming the object, at the first refusal. */
export async function createSeedObjects(objects: readonly KubeObject[], catalogue: Catalogue, create: CreateRequest): Promise<void> {
  for (const obj of objects) {
    const path = isCrd(obj) ? '/apis/apiextensions.k8s.io/v1/customresourcedefinitions' : collectionPath(await servedEntry(catalogue, obj), obj)
    const res = await create(path, obj)
    if (res.status !== 201) {
      const body = await res.text()
      let message = body
      try {
        message = (JSON.parse(body) as { message?: string }).message ?? body
      } catch {
        // not a Status: the text as it is
      }
      throw new Error(`cannot seed ${describe(obj)}: ${res.status} ${message}`)
    }
    await res.body?.cancel()
  }
}

function parseDocuments(text: string): KubeObject[] {
  const docs = parseAllDocuments(text)
  const list = Array.isArray(docs) ? docs : [docs]
  const out: KubeObject[] = []
  for (const doc of list) {
    if (doc.errors.length) throw new Error(`options.objects: ${doc.errors[0]!.message}`)
    const value = doc.toJS() as unknown
    if (value !== null && value !== undefined) out.push(value as KubeObject)
  }
  return out
}

function unpackList(obj: KubeObject): KubeObject[] {
  const items = (obj as { items?: unknown }).items
  return typeof obj?.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(items) ? (items as KubeObject[]).flatMap(unpackList) : [obj]
}

function isCrd(obj: KubeObject): boolean {
  return obj.kind === 'CustomResourceDefinition' && (obj.apiVersion ?? '').startsWith('apiextensions.k8s.io/')
}

function describe(obj: KubeObject): string {
  const ns = obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''
  return `${obj.kind} ${ns}${obj.metadata?.name ?? obj.metadata?.generateName ?? ''} (${obj.apiVersion})`
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

function findEntry(catalogue: Catalogue, obj: KubeObject): { resource: string; namespaced: boolean } | undefined {
  const { group, version } = splitApiVersion(obj.apiVersion ?? '')
  return catalogue.inGroupVersion(group, version).find((e) => e.kind === obj.kind && !e.resource.includes('/'))
}

/** The kind's resource, waiting while a seeded CRD that defines it is being established. */
async function servedEntry(catalogue: Catalogue, obj: KubeObject): Promise<{ resource: string; namespaced: boolean }> {
  const found = findEntry(catalogue, obj)
  if (found) return found
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe()
      reject(new Error(`cannot seed ${describe(obj)}: no such kind is served`))
    }, SERVED_WAIT_MS)
    const unsubscribe = catalogue.onChange(() => {
      const entry = findEntry(catalogue, obj)
      if (!entry) return
      clearTimeout(timer)
      unsubscribe()
      resolve(entry)
    })
  })
}

function collectionPath(entry: { resource: string; namespaced: boolean }, obj: KubeObject): string {
  const { group, version } = splitApiVersion(obj.apiVersion ?? '')
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`
  if (!entry.namespaced) return `${base}/${entry.resource}`
  const namespace = obj.metadata?.namespace ?? 'default'
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${entry.resource}`
}
