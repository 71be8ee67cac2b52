/**
 * Objects that can never change again (deep-frozen by the stores and the
 * watch cache), and their encodings kept beside them: an object version
 * read a thousand times is encoded once. Only a deep freeze marks an object
 * (a frozen root may still hold changeable parts), and only pure functions
 * of the object are kept, so a kept text is always the text it would get.
 */
const deepFrozen = new WeakSet<object>()

/** Records that `obj` and everything in it are frozen. */
export function markDeepFrozen(obj: object): void {
  deepFrozen.add(obj)
}

export function isDeepFrozen(value: unknown): value is object {
  return typeof value === 'object' && value !== null && deepFrozen.has(value)
}

/** One kind of encoding kept per immutable object. */
export class EncodingMemo<T> {
  private readonly byValue = new WeakMap<object, T>()

  /** `encode(value)`, computed once per immutable value; anything else is encoded every time. */
  of<V>(value: V, encode: (value: V) => T): T {
    if (!isDeepFrozen(value)) return encode(value)
    let out = this.byValue.get(value)
    if (out === undefined) {
      out = encode(value)
      this.byValue.set(value, out)
    }
    return out
  }

  /** What is kept for `value`, if anything. */
  kept(value: object): T | undefined {
    return this.byValue.get(value)
  }

  /** Keeps `out` for `value` when the value is immutable (an encoding made in steps); gives `out` back. */
  keep<V extends object>(value: V, out: T): T {
    if (isDeepFrozen(value)) this.byValue.set(value, out)
    return out
  }

  /** `of` for a value the caller already found deep-frozen (`isDeepFrozen`): one lookup, not two. */
  ofFrozen<V extends object>(value: V, encode: (value: V) => T): T {
    let out = this.byValue.get(value)
    if (out === undefined) {
      out = encode(value)
      this.byValue.set(value, out)
    }
    return out
  }
}
