/**
 * By name: writes a controller made and its informer has not shown yet (upstream's
 * ControllerExpectations): until the pods it created appear and those it
 * deleted go, a reconcile would count from a stale cache and create or
 * delete twice. An expectation older than five minutes is dropped, as
 * upstream drops it, so a lost watch event cannot hold a key for ever.
 */
const EXPECTATION_TTL_MS = 5 * 60_000

interface Pending {
  creates: Set<string>
  deletes: Set<string>
  since: number
}

export class NamedExpectations {
  private readonly pending = new Map<string, Pending>()

  expectCreate(key: string, name: string): void {
    this.entry(key).creates.add(name)
  }

  expectDelete(key: string, name: string): void {
    this.entry(key).deletes.add(name)
  }

  /** A create that failed will never be seen. */
  forgetCreate(key: string, name: string): void {
    this.pending.get(key)?.creates.delete(name)
  }

  /**
   * Whether every expected write is visible: `seen(name)` says whether the
   * cache holds the object still (without a deletion under way, for deletes).
   */
  satisfied(key: string, present: (name: string) => boolean, deleting: (name: string) => boolean): boolean {
    const entry = this.pending.get(key)
    if (!entry) return true
    for (const name of entry.creates) if (present(name)) entry.creates.delete(name)
    for (const name of entry.deletes) if (!present(name) || deleting(name)) entry.deletes.delete(name)
    if ((entry.creates.size === 0 && entry.deletes.size === 0) || Date.now() - entry.since > EXPECTATION_TTL_MS) {
      this.pending.delete(key)
      return true
    }
    return false
  }

  forget(key: string): void {
    this.pending.delete(key)
  }

  private entry(key: string): Pending {
    let entry = this.pending.get(key)
    if (!entry) {
      entry = { creates: new Set(), deletes: new Set(), since: Date.now() }
      this.pending.set(key, entry)
    }
    return entry
  }
}
