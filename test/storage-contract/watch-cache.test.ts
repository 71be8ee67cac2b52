import { MemoryStorage } from '../../core/storage/memory.js'
import { WatchCache } from '../../core/storage/watch-cache.js'
import { runStorageContract } from './contract.js'

const backends = new WeakMap<WatchCache, MemoryStorage>()

runStorageContract(
  'watch cache over memory',
  async () => {
    const backend = new MemoryStorage()
    const cache = new WatchCache(backend)
    // The contract's objects live under /registry/pods/; everything else passes through.
    cache.cacheResource('/registry/pods/')
    backends.set(cache, backend)
    return cache
  },
  {
    compact: async (cache) => {
      const revision = await cache.currentRevision()
      backends.get(cache)!.compact(revision)
      cache.compact(revision)
    },
  },
)
