/**
 * What a controller waits to see before acting on an owner again
 * (upstream's ControllerExpectations): the creates it sent and the pods it
 * deleted, until the informer shows them. Without it a reconcile that runs
 * before its own pods reach the informer would make them twice. An
 * expectation older than the limit is dropped, as upstream's TTL does, so
 * a lost watch event cannot stall an owner for good.
 */
const EXPECTATION_TTL_MS = 60_000

interface Pending {
  creates: number
  deletes: Set<string>
  since: number
}

export class Expectations {
  private readonly pending = new Map<string, Pending>()

  constructor(private readonly now: () => Date) {}

  /** True when nothing this controller sent for `key` is still unseen. */
  satisfied(key: string): boolean {
    const pending = this.pending.get(key)
    if (!pending) return true
    if ((pending.creates <= 0 && pending.deletes.size === 0) || this.now().getTime() - pending.since > EXPECTATION_TTL_MS) {
      this.pending.delete(key)
      return true
    }
    return false
  }

  expect(key: string, creates: number, deletes: readonly string[]): void {
    this.pending.set(key, { creates, deletes: new Set(deletes), since: this.now().getTime() })
  }

  /** A create that failed will never be seen. */
  createFailed(key: string): void {
    const pending = this.pending.get(key)
    if (pending) pending.creates--
  }

  created(key: string): void {
    const pending = this.pending.get(key)
    if (pending) pending.creates--
  }

  deleted(key: string, podName: string): void {
    this.pending.get(key)?.deletes.delete(podName)
  }

  forget(key: string): void {
    this.pending.delete(key)
  }
}
