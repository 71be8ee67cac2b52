/**
 * The rewrite of stored values with the current write provider, this
 * server's step beyond upstream's `kubectl replace` after a rotation
 * (README, "Encryption at rest"). Every object of the resources the
 * EncryptionConfiguration covers is read page by page; each one goes
 * through the store's own optimistic read-modify-write with the object
 * unchanged, which writes only when the value was read with anything but
 * the current first provider and key (stale). A client's write landing in
 * between makes the store read again (its value is then current, so nothing
 * is written over it); nothing is ever deleted or recreated. A rerun after
 * an interruption passes the values already rewritten without writing them.
 */
import { qualifiedResource } from '../http/status-error.js'
import type { KubeObject } from '../resources/object.js'
import { type Storage, StorageError } from '../storage/interface.js'

export interface RewriteTarget {
  /** '' for the core group. */
  group: string
  resource: string
  /** Where the resource's keys start, ending in `/`. */
  prefix: string
  storage: Storage
}

export interface RewriteOptions {
  /** Objects read per page (and between two progress lines). */
  pageSize?: number
}

export interface RewriteCounts {
  checked: number
  rewritten: number
  /** Already written with the current provider and key: passed over. */
  current: number
  /** Objects that could not be read or written (and pages that could not be listed): left as they were. */
  failed: number
}

type Outcome = 'rewritten' | 'current' | 'gone'

const DEFAULT_PAGE_SIZE = 100

function keyOf(prefix: string, obj: KubeObject): string {
  const { namespace, name } = obj.metadata ?? {}
  return namespace ? `${prefix}${namespace}/${name}` : `${prefix}${name}`
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/** One object written again if its value is stale; told apart by whether its resourceVersion moved. */
async function rewriteOne(storage: Storage, key: string): Promise<Outcome> {
  let seen: string | undefined
  try {
    const after = await storage.guaranteedUpdate(key, (current) => {
      seen = current.metadata?.resourceVersion
      return current
    })
    return after.metadata?.resourceVersion === seen ? 'current' : 'rewritten'
  } catch (err) {
    // Deleted since the page was read: nothing left to rewrite.
    if (err instanceof StorageError && err.code === 'KeyNotFound') return 'gone'
    throw err
  }
}

const summary = (c: RewriteCounts): string => `${c.checked} checked, ${c.rewritten} rewritten, ${c.current} already current, ${c.failed} failed`

/**
 * The lines of a rewrite, yielded as it goes: a progress line per page, a
 * line per resource, one per failure (naming the key), and the counts at the
 * end. Stopping the iteration stops the rewrite between two objects.
 */
export async function* rewriteStaleValues(targets: readonly RewriteTarget[], options: RewriteOptions = {}): AsyncGenerator<string, RewriteCounts> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE
  const total: RewriteCounts = { checked: 0, rewritten: 0, current: 0, failed: 0 }
  for (const target of targets) {
    const name = qualifiedResource(target)
    const counts: RewriteCounts = { checked: 0, rewritten: 0, current: 0, failed: 0 }
    let token: string | undefined
    do {
      let page
      try {
        page = await target.storage.list(target.prefix, { limit: pageSize, ...(token ? { continue: token } : {}) })
      } catch (err) {
        // A page holding a value no provider reads (a removed key) fails as a whole, as a client's list
        // would: the rest of this resource waits for a rerun once the key is configured again.
        yield `${name}: cannot list (${message(err)}); the rest of ${name} is left as it is`
        counts.failed++
        break
      }
      for (const obj of page.items) {
        const key = keyOf(target.prefix, obj)
        try {
          const outcome = await rewriteOne(target.storage, key)
          if (outcome === 'gone') continue
          counts.checked++
          if (outcome === 'rewritten') counts.rewritten++
          else counts.current++
        } catch (err) {
          counts.checked++
          counts.failed++
          yield `${name}: failed ${key}: ${message(err)}`
        }
      }
      token = page.continue
      if (token) yield `${name}: ${summary(counts)} so far`
    } while (token)
    yield `${name}: ${summary(counts)}`
    total.checked += counts.checked
    total.rewritten += counts.rewritten
    total.current += counts.current
    total.failed += counts.failed
  }
  yield `done: ${summary(total)}${total.failed ? '; the failed objects are unchanged, run again once their providers are back' : ''}`
  return total
}
