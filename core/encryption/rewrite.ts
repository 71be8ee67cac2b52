/**
 * The rewrite of stored values with the current write provider, this
 * server's step beyond upstream's `kubectl replace` after a rotation
 * (docs/security.md, "Encryption at rest"). Every object of the resources the
 * EncryptionConfiguration covers is read page by page; each one goes
 * through the store's own optimistic read-modify-write with the object
 * unchanged, which writes only when the value was read with anything but
 * the current first provider and key (stale). A client's write landing in
 * between makes the store read again (its value is then current, so nothing
 * is written over it); nothing is ever deleted or recreated. A value no
 * configured provider reads (a removed key, a KMS plugin down) is reported by
 * its key and left as it is, and the list goes on past it. A rerun after an
 * interruption passes the values already rewritten without writing them.
 */
import { qualifiedResource } from '../machinery/status-error.js'
import type { KubeObject } from '../machinery/object.js'
import { CONTINUE_AT_LATEST, encodeContinue } from '../storage/continue-token.js'
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
  /** Objects that could not be read or written (and a resource that could not be listed at all): left as they were. */
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

/** The key a list failed on because its value reads with no configured provider (a removed key). */
function unreadableKey(err: unknown, prefix: string): string | undefined {
  return err instanceof StorageError && err.code === 'Internal' && err.key.startsWith(prefix) && err.key !== prefix ? err.key : undefined
}

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
    // After a page failed on an unreadable value, its range is read again one object at a time.
    let singles = 0
    let skippedTo: string | undefined
    let reportAt = pageSize
    for (;;) {
      let page
      try {
        page = await target.storage.list(target.prefix, { limit: singles ? 1 : pageSize, ...(token ? { continue: token } : {}) })
      } catch (err) {
        const key = unreadableKey(err, target.prefix)
        // Each skip moves past a key further on; anything else ends this resource rather than loop.
        if (key === undefined || (skippedTo !== undefined && key <= skippedTo)) {
          counts.failed++
          yield `${name}: cannot list: ${message(err)}; the rest of ${name} is left as it is`
          break
        }
        if (!singles) {
          singles = pageSize
          continue
        }
        // This object alone: reported, left as it is, and the list goes on after its key.
        counts.checked++
        counts.failed++
        singles--
        yield `${name}: failed ${key}: ${message(err)}`
        skippedTo = key
        token = encodeContinue(`${key}\u0000`, target.prefix, CONTINUE_AT_LATEST)
        continue
      }
      if (singles) singles--
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
      if (!token) break
      if (counts.checked >= reportAt) {
        reportAt = counts.checked + pageSize
        yield `${name}: ${summary(counts)} so far`
      }
    }
    yield `${name}: ${summary(counts)}`
    total.checked += counts.checked
    total.rewritten += counts.rewritten
    total.current += counts.current
    total.failed += counts.failed
  }
  yield `done: ${summary(total)}${total.failed ? '; the failed objects are unchanged, run again once their providers are back' : ''}`
  return total
}
