/**
 * The smallest part of the `reflect-metadata` API that @peculiar/x509 needs.
 * It depends on tsyringe, which refuses to load unless `Reflect.getMetadata`
 * exists, and only reads and writes constructor metadata when x509's classes
 * are defined. Installed only when no real polyfill is present, so a program
 * that loads `reflect-metadata` itself keeps it.
 */

type MetadataMap = Map<unknown, unknown>

interface ReflectMetadataApi {
  getMetadata?(key: unknown, target: object): unknown
  getOwnMetadata?(key: unknown, target: object): unknown
  defineMetadata?(key: unknown, value: unknown, target: object): void
  hasMetadata?(key: unknown, target: object): boolean
  hasOwnMetadata?(key: unknown, target: object): boolean
}

const reflect = Reflect as typeof Reflect & ReflectMetadataApi

if (typeof reflect.getMetadata !== 'function') {
  const store = new WeakMap<object, MetadataMap>()
  const own = (target: object): MetadataMap | undefined => store.get(target)
  const find = (key: unknown, target: object): MetadataMap | undefined => {
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t)) {
      const map = store.get(t)
      if (map?.has(key)) return map
    }
    return undefined
  }
  const api: Required<ReflectMetadataApi> = {
    getMetadata: (key, target) => find(key, target)?.get(key),
    getOwnMetadata: (key, target) => own(target)?.get(key),
    hasMetadata: (key, target) => find(key, target) !== undefined,
    hasOwnMetadata: (key, target) => own(target)?.has(key) ?? false,
    defineMetadata(key, value, target) {
      let map = store.get(target)
      if (!map) {
        map = new Map()
        store.set(target, map)
      }
      map.set(key, value)
    },
  }
  for (const [name, fn] of Object.entries(api)) {
    Object.defineProperty(Reflect, name, { value: fn, configurable: true, writable: true })
  }
}

export {}
