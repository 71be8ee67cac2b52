/**
 * The `kms` provider of apiVersion v1 (upstream's envelope package, behind
 * the KMSv1 feature gate): every write draws a new 32-byte DEK and has the
 * plugin encrypt it; the value after `k8s:enc:kms:v1:<name>:` is the
 * encrypted DEK's length (2 bytes, big-endian), the encrypted DEK, then
 * the data sealed with the DEK by AES-GCM (nonce, ciphertext, tag; the
 * storage key authenticated). Reads also open AES-CBC, which upstream
 * wrote before 1.25, and mark such values stale. Decrypted DEKs are kept
 * in a cache of `cachesize` entries.
 */
import { base64Encode } from '../../machinery/base64.js'
import type { DataContext, FromStorage, ValueTransformer } from '../../storage/value/transformer.js'
import { aesCbcTransformer, aesGcmTransformer } from '../aes.js'
import type { KmsV1Client } from './client.js'
import { Lru } from './lru.js'
import { CachedProbe, errorMessage, type KmsTimings } from './probe.js'

const API_VERSION = 'v1beta1'
const DEK_BYTES = 32

// The encrypted DEK may be 64 KiB: encoded in chunks, not spread into one call's arguments.
const cacheKey = (encryptedDek: Uint8Array): string => base64Encode(encryptedDek)

/** GCM as written since 1.25, then CBC; a value only CBC opens is stale. */
function dekTransformer(dek: Uint8Array): ValueTransformer {
  const gcm = aesGcmTransformer(dek)
  const cbc = aesCbcTransformer(dek)
  return {
    toStorage: (bytes, context) => gcm.toStorage(bytes, context),
    async fromStorage(data, context) {
      try {
        return await gcm.fromStorage(data, context)
      } catch (gcmError) {
        try {
          return { bytes: (await cbc.fromStorage(data, context)).bytes, stale: true }
        } catch (cbcError) {
          throw new Error(`[${errorMessage(gcmError)}, ${errorMessage(cbcError)}]`)
        }
      }
    },
  }
}

export class KmsV1Provider implements ValueTransformer {
  private readonly deks: Lru<ValueTransformer>
  private versionChecked: Promise<void> | undefined
  private readonly probe: CachedProbe

  constructor(
    readonly name: string,
    private readonly client: KmsV1Client,
    cacheSize: number,
    timings: KmsTimings,
    now: () => number = Date.now,
  ) {
    this.deks = new Lru(cacheSize)
    this.probe = new CachedProbe(() => this.ping(), timings, now)
  }

  /** The health check: encrypt and decrypt a word through the plugin (reused for a while). */
  check(): Promise<void> {
    return this.probe.check()
  }

  close(): void {
    this.client.close()
  }

  /** Upstream asks the plugin's version once, before its first use, and refuses any but v1beta1. */
  private checkVersion(): Promise<void> {
    return (this.versionChecked ??= (async () => {
      let version: string
      try {
        version = await this.client.version()
      } catch (err) {
        throw new Error(`failed get version from remote KMS provider: ${errorMessage(err)}`)
      }
      if (version !== API_VERSION) throw new Error(`KMS provider api version ${version} is not supported, only ${API_VERSION} is supported now`)
    })().catch((err: unknown) => {
      this.versionChecked = undefined
      throw err
    }))
  }

  private async encrypt(plain: Uint8Array): Promise<Uint8Array> {
    await this.checkVersion()
    return this.client.encrypt(plain)
  }

  private async decrypt(cipher: Uint8Array): Promise<Uint8Array> {
    await this.checkVersion()
    return this.client.decrypt(cipher)
  }

  private async ping(): Promise<void> {
    let sealed: Uint8Array
    try {
      sealed = await this.encrypt(new TextEncoder().encode('ping'))
    } catch (err) {
      throw new Error(`failed to perform encrypt section of the healthz check for KMS Provider ${this.name}, error: ${errorMessage(err)}`)
    }
    try {
      await this.decrypt(sealed)
    } catch (err) {
      throw new Error(`failed to perform decrypt section of the healthz check for KMS Provider ${this.name}, error: ${errorMessage(err)}`)
    }
  }

  async toStorage(bytes: Uint8Array, context: DataContext): Promise<Uint8Array> {
    const dek = crypto.getRandomValues(new Uint8Array(DEK_BYTES))
    const encryptedDek = await this.encrypt(dek)
    if (encryptedDek.length > 0xffff) throw new Error('the encrypted DEK is longer than 65535 bytes')
    const transformer = dekTransformer(dek)
    this.deks.set(cacheKey(encryptedDek), transformer)
    const sealed = await transformer.toStorage(bytes, context)
    const out = new Uint8Array(2 + encryptedDek.length + sealed.length)
    new DataView(out.buffer).setUint16(0, encryptedDek.length)
    out.set(encryptedDek, 2)
    out.set(sealed, 2 + encryptedDek.length)
    return out
  }

  async fromStorage(data: Uint8Array, context: DataContext): Promise<FromStorage> {
    const length = data.length >= 2 ? (data[0]! << 8) | data[1]! : -1
    if (length < 0 || data.length < 2 + length) {
      throw new Error('invalid data encountered by envelope transformer: failed to read uint16 length prefixed data')
    }
    const encryptedDek = data.subarray(2, 2 + length)
    const key = cacheKey(encryptedDek)
    let transformer = this.deks.get(key)
    if (!transformer) {
      transformer = dekTransformer(await this.decrypt(encryptedDek.slice()))
      this.deks.set(key, transformer)
    }
    return transformer.fromStorage(data.subarray(2 + length), context)
  }
}
