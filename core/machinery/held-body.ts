/**
 * A body that is bytes in hand, for a Response or Request made without one
 * (core/http/bytes-response.ts, in-process-request.ts).
 *
 * Node 20's Request and Response make a ReadableStream for every body they
 * are given, at construction (some 15 to 25 µs each: the stream is made
 * transferable), and reading it back goes through that stream's reader. The
 * server's own readers, and most in-process callers, take a body whole with
 * `arrayBuffer()`, `text()` or `json()`: those read the bytes directly, once,
 * as a body is read once. Anything else that needs the body (`body`,
 * `clone()`, `blob()`, `formData()`) gets it from the runtime's own object,
 * made then with the same bytes.
 */

const decoder = new TextDecoder()

/** The members that read a body, alike on a Response and a Request (what a holder's class defines again). */
type BodyReaders = Pick<Response, 'body' | 'bodyUsed' | 'arrayBuffer' | 'blob' | 'formData' | 'json' | 'text'>

export class HeldBody<Full extends BodyReaders> {
  #used = false
  /** The runtime's own object for the same message, once something asked for more than the three readers. */
  #full: Full | undefined

  constructor(
    readonly bytes: Uint8Array,
    private readonly makeFull: (bytes: Uint8Array) => Full,
  ) {}

  /** The runtime's own object, made at the first call; a body read already is read there too. */
  full(): Full {
    if (!this.#full) {
      this.#full = this.makeFull(this.bytes)
      if (this.#used) void this.#full.arrayBuffer().catch(() => {})
    }
    return this.#full
  }

  /** The runtime's own object, if one was made. */
  get made(): Full | undefined {
    return this.#full
  }

  get used(): boolean {
    return this.#full ? this.#full.bodyUsed : this.#used
  }

  /** The bytes, once: a body is read only once, as the runtime's objects refuse a second read. */
  #take(): Uint8Array {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read')
    this.#used = true
    return this.bytes
  }

  async text(): Promise<string> {
    if (this.#full) return this.#full.text()
    return decoder.decode(this.#take())
  }

  async json(): Promise<unknown> {
    if (this.#full) return this.#full.json() as Promise<unknown>
    return JSON.parse(decoder.decode(this.#take())) as unknown
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#full) return this.#full.arrayBuffer()
    const bytes = this.#take()
    // A copy of its own (the bytes may be kept for other answers); made and filled, which is quicker than ArrayBuffer's slice.
    const copy = new ArrayBuffer(bytes.byteLength)
    new Uint8Array(copy).set(bytes)
    return copy
  }
}

/** Each message's held body, for the members installBodyReaders defines on its class. */
const heldBodies = new WeakMap<object, HeldBody<BodyReaders>>()

/** Gives `message` (an instance of a class with installBodyReaders) its body. */
export function holdBody(message: object, held: HeldBody<BodyReaders>): void {
  heldBodies.set(message, held)
}

/** The bytes `message` holds, read or not, without reading them; undefined for an object that holds none. */
export function heldBytesOf(message: object): Uint8Array | undefined {
  return heldBodies.get(message)?.bytes
}

/** The body `message` holds; a TypeError for an object that holds none, as a runtime's member called on the wrong object. */
export function heldBodyOf(message: object): HeldBody<BodyReaders> {
  const held = heldBodies.get(message)
  if (!held) throw new TypeError('Illegal invocation')
  return held
}

/**
 * Defines a Request's or Response's body members on `proto`, a class made
 * without a body whose instances hold one (holdBody): the three readers
 * read the bytes, the rest ask the runtime's own object. `clone()` is the
 * class's own, as it makes another of its kind.
 */
export function installBodyReaders(proto: object): void {
  const method = (read: (held: HeldBody<BodyReaders>) => unknown): PropertyDescriptor => ({
    value(this: object) {
      return read(heldBodyOf(this))
    },
    writable: true,
    configurable: true,
  })
  Object.defineProperties(proto, {
    body: {
      get(this: object) {
        return heldBodyOf(this).full().body
      },
      configurable: true,
    },
    bodyUsed: {
      get(this: object) {
        return heldBodyOf(this).used
      },
      configurable: true,
    },
    text: method((held) => held.text()),
    json: method((held) => held.json()),
    arrayBuffer: method((held) => held.arrayBuffer()),
    blob: method((held) => held.full().blob()),
    formData: method((held) => held.full().formData()),
  })
}
