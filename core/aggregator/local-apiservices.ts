/**
 * The APIServices of the server's own group/versions, as upstream's
 * autoregister and CRD registration controllers keep them: one per served
 * group/version (built-in ones labelled `onstart`, custom resources' `true`),
 * created at start and as CRD versions come, deleted as they go or when
 * `--runtime-config` turns one off, and marked Available (`Local`).
 *
 * Unlike upstream, a local APIService is restored whenever it is changed,
 * not only at start: the server never proxies a group/version it serves
 * itself, so an APIService that says otherwise would only mislead.
 */
import { hasStatusCode } from '../machinery/status-error.js'
import { ADMIN_IDENTITY } from '../machinery/identities.js'
import type { Logger } from '../logging/logger.js'
import type { Catalogue, ResourceEntry } from '../resources/catalogue.js'
import type { KubeObject } from '../machinery/object.js'
import { APIREGISTRATION_GROUP, apiServiceName, AUTOMANAGED_LABEL, readApiService, withAvailableCondition } from './apiservice.js'
import { localPriority } from './priorities.js'
import { LOCAL_AVAILABLE } from '../resources/apiregistration/api-service-rules.js'
import type { AggregatorObjects } from './service-location.js'


interface Desired {
  name: string
  group: string
  version: string
  managed: 'onstart' | 'true'
  groupPriorityMinimum: number
  versionPriority: number
}

/** Every group/version the catalogue serves, with the priorities it is listed under. */
export function desiredLocalApiServices(catalogue: Catalogue): Map<string, Desired> {
  const byName = new Map<string, Desired>()
  const custom = new Set<string>()
  const all: ResourceEntry[] = [...catalogue.entries]
  for (const e of all) if (e.schema) custom.add(`${e.group}/${e.version}`)
  for (const { group, version } of catalogue.groupVersions()) {
    const isCustom = custom.has(`${group}/${version}`)
    const name = apiServiceName(group, version)
    byName.set(name, { name, group, version, managed: isCustom ? 'true' : 'onstart', ...localPriority(group, version, isCustom) })
  }
  return byName
}

const sameSpec = (obj: KubeObject, d: Desired): boolean => {
  const a = readApiService(obj)
  return !a.service && a.group === d.group && a.version === d.version && a.groupPriorityMinimum === d.groupPriorityMinimum && a.versionPriority === d.versionPriority
}

export interface LocalApiServices {
  /** Settles once the first reconciliation is done. */
  readonly ready: Promise<void>
  /** Puts every local APIService back as it should be (one was changed or deleted). */
  reconcile(): Promise<void>
  stop(): void
}

export function keepLocalApiServices(objects: AggregatorObjects, now: () => Date, logger: Logger): LocalApiServices | undefined {
  const entry = objects.catalogue.lookup(APIREGISTRATION_GROUP, 'v1', 'apiservices')
  if (!entry) return undefined
  const stored = objects.stored
  const ctx = () => ({ user: ADMIN_IDENTITY, now: now() })

  const ensure = async (d: Desired): Promise<void> => {
    const spec = { group: d.group, version: d.version, groupPriorityMinimum: d.groupPriorityMinimum, versionPriority: d.versionPriority }
    let current: KubeObject | undefined
    try {
      // Only looked at (a write below reads the stored object itself): the watch cache's copy once it is fresh,
      // one revision read for them all, as upstream's controller compares with its lister's copy.
      current = await stored.get(entry, '', d.name, { readOnly: true })
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err
    }
    if (!current) {
      const body = { apiVersion: `${APIREGISTRATION_GROUP}/v1`, kind: 'APIService', metadata: { name: d.name, labels: { [AUTOMANAGED_LABEL]: d.managed } }, spec }
      try {
        current = await stored.create(entry, '', body, ctx())
      } catch (err) {
        // Another server on the same storage made it first.
        if (!hasStatusCode(err, 409)) throw err
        current = await stored.get(entry, '', d.name, { readOnly: true })
      }
    } else if (!sameSpec(current, d) || current.metadata.labels?.[AUTOMANAGED_LABEL] !== d.managed) {
      current = await stored.update(
        entry,
        '',
        d.name,
        (obj) => ({ ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, [AUTOMANAGED_LABEL]: d.managed } }, spec }),
        ctx(),
      )
    }
    if (withAvailableCondition(current, LOCAL_AVAILABLE, now())) {
      await stored.update(entry, '', d.name, (obj) => withAvailableCondition(obj, LOCAL_AVAILABLE, now()) ?? obj, ctx(), 'status')
    }
  }

  /** Deletes a managed, local APIService whose group/version is no longer served. */
  const removeStale = async (desired: Map<string, Desired>): Promise<void> => {
    for (const obj of await stored.list(entry, '')) {
      const name = obj.metadata.name ?? ''
      if (desired.has(name) || !obj.metadata.labels?.[AUTOMANAGED_LABEL] || readApiService(obj).service) continue
      await stored.delete(entry, '', name, ctx()).catch((err: unknown) => {
        if (!hasStatusCode(err, 404)) throw err
      })
    }
  }

  // One reconciliation at a time; changes that come meanwhile fold into the next.
  let running: Promise<void> = Promise.resolve()
  let stopped = false
  const reconcile = (): Promise<void> => {
    running = running.then(async () => {
      if (stopped) return
      const desired = desiredLocalApiServices(objects.catalogue)
      // Each APIService is its own: all of them at once, as one after another their round trips (a read, a
      // create, a status write each) held up a first start on etcd by about 100 ms after everything else was done.
      // Settled, every one, before a failure ends this reconciliation: the next one must not overlap it.
      const results = await Promise.allSettled([...desired.values()].map((d) => ensure(d)))
      const failed = results.find((r) => r.status === 'rejected')
      if (failed) throw failed.reason
      await removeStale(desired)
    })
    running.catch((err: unknown) => logger.warn({ err: String(err) }, 'cannot keep the local APIServices'))
    return running
  }
  const ready = reconcile()
  const unsubscribe = objects.catalogue.onChange(() => void reconcile().catch(() => {}))
  return {
    ready: ready.catch(() => {}),
    reconcile,
    stop() {
      stopped = true
      unsubscribe()
    },
  }
}
