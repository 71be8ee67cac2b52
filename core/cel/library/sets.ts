/**
 * cel-go's sets extension (ext.Sets, in the environment from 1.29):
 * `sets.contains(a, b)`, `sets.equivalent(a, b)`, `sets.intersects(a, b)`.
 */
import type { Environment } from '@marcbachmann/cel-js'

/** Receiver of the `sets.*` functions: the library cannot name a function `sets.x`, only a method on a constant. */
class SetsLibrary {}

/** CEL equality for the values lists hold here: numbers compare across int and double, everything else strictly. */
function celEqual(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return a == b // loose equality compares a bigint with a number by value
  }
  return a === b
}

const has = (list: readonly unknown[], value: unknown) => list.some((item) => celEqual(item, value))

export function registerSets(env: Environment): Environment {
  return env
    .registerType('SetsLibrary', SetsLibrary)
    .registerConstant('sets', 'SetsLibrary', new SetsLibrary())
    .registerFunction('SetsLibrary.contains(list, list): bool', (_s: SetsLibrary, a: unknown[], b: unknown[]) => b.every((x) => has(a, x)))
    .registerFunction('SetsLibrary.equivalent(list, list): bool', (_s: SetsLibrary, a: unknown[], b: unknown[]) =>
      b.every((x) => has(a, x)) && a.every((x) => has(b, x)),
    )
    .registerFunction('SetsLibrary.intersects(list, list): bool', (_s: SetsLibrary, a: unknown[], b: unknown[]) => a.some((x) => has(b, x)))
}
