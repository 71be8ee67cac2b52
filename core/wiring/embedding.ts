/**
 * What an embedder does with the in-memory store: snapshot it, restore a
 * snapshot, and reset to the state start-up left (the seeded objects and
 * what start-up created). Only the store the server made has snapshots.
 */
import type { ActivityRecorder } from '../embedding/activity.js'
import type { MemorySnapshot, MemoryStorage } from '../storage/memory.js'
import type { ServerStorage } from '../storage/server-storage.js'

export interface SnapshotControls {
  snapshot(): Promise<MemorySnapshot>
  restore(snapshot: MemorySnapshot): Promise<void>
  reset(): Promise<void>
  /** Takes the state `reset` returns to: called once start-up is done. */
  markStarted(): void
}

export interface SnapshotWiring {
  readonly memory: MemoryStorage | undefined
  readonly factory: ServerStorage
  /** Serves the restored custom resources before `restore` resolves. */
  readonly resyncCustomResources: () => Promise<void>
  readonly activity: ActivityRecorder
  readonly ready: () => Promise<void>
}

export function snapshotControls({ memory, factory, resyncCustomResources, activity, ready }: SnapshotWiring): SnapshotControls {
  let started: MemorySnapshot | undefined
  const inMemory = (): MemoryStorage => {
    if (!memory) throw new Error('snapshot, restore and reset need the in-memory store: the server was given its own storage')
    return memory
  }
  const restore = async (snapshot: MemorySnapshot): Promise<void> => {
    inMemory().restore(snapshot)
    // Reads at resourceVersion 0 come from the watch caches: each must hold the restored state first.
    await factory.caughtUp()
    await resyncCustomResources()
  }
  return {
    async snapshot() {
      const store = inMemory()
      await ready()
      return store.snapshot()
    },
    restore,
    async reset() {
      inMemory()
      await ready()
      await restore(started!)
      activity.clear()
    },
    markStarted() {
      started = memory?.snapshot()
    },
  }
}
