/**
 * The `kms` provider of apiVersion v2 (upstream's envelope/kmsv2 and the
 * probe in encryptionconfig): values are an EncryptedObject after
 * `k8s:enc:kms:v2:<name>:`. The server draws a DEK seed, has the plugin
 * encrypt it once, and derives a key per value from it (seeded-gcm.ts);
 * the seed is kept while the plugin's Status reports the same key ID and
 * replaced when it changes. Status is polled every minute (every 10 s
 * while failing); a seed is used for writes until 3 minutes after the
 * last good Status, reads decrypt DEK sources through the plugin once and
 * keep them in a cache. A value read under another key ID is stale, so
 * its next write moves it to the current key.
 */
import { base64Encode } from '../../machinery/base64.js'
import type { DataContext, FromStorage, ValueTransformer } from '../../storage/value/transformer.js'
import { aesGcmTransformer } from '../aes.js'
import type { KmsV2Client } from './client.js'
import {
  DEK_SOURCE_HKDF_SEED,
  decodeEncryptedObject,
  type EncryptedObject,
  encodeEncryptedObject,
  keyIdProblem,
  validateEncryptedObject,
} from './encrypted-object.js'
import { Lru } from './lru.js'
import { backgroundTimer, CachedProbe, errorMessage, type KmsTimings } from './probe.js'
import { SEED_BYTES, seededGcmTransformer } from './seeded-gcm.js'

const ACCEPTED_VERSIONS = ['v2', 'v2beta1']
// Seeds and keys decrypted for reads; upstream keeps them a day, here the last thousand.
const READ_CACHE_ENTRIES = 1000

type DekSource = Omit<EncryptedObject, 'encryptedData'>

interface WriteState {
  source: DekSource
  transformer: ValueTransformer
  expiresAt: number
}

const hex = (bytes: ArrayBuffer): string => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('')

/** A key ID is logged and reported only as its hash (upstream's GetHashIfNotEmpty). */
async function keyIdHash(keyId: string): Promise<string> {
  return keyId ? `sha256:${hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(keyId)))}` : ''
}

/** What identifies a decrypted DEK source: everything the plugin is given to decrypt it. */
function cacheKey(o: DekSource): string {
  const annotations = Object.keys(o.annotations)
    .sort()
    .map((k) => `${k}=${base64Encode(o.annotations[k]!)}`)
  return JSON.stringify([o.encryptedDEKSourceType, base64Encode(o.encryptedDEKSource), o.keyId, annotations])
}

const readTransformer = (source: DekSource, plain: Uint8Array): ValueTransformer =>
  source.encryptedDEKSourceType === DEK_SOURCE_HKDF_SEED ? seededGcmTransformer(plain) : aesGcmTransformer(plain)

export class KmsV2Provider implements ValueTransformer {
  private state: WriteState | undefined
  private version: string | undefined
  private readonly reads = new Lru<ValueTransformer>(READ_CACHE_ENTRIES)
  private readonly probe: CachedProbe
  private readonly primed: Promise<void>
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false

  constructor(
    readonly name: string,
    private readonly client: KmsV2Client,
    private readonly timings: KmsTimings,
    private readonly now: () => number = Date.now,
  ) {
    this.probe = new CachedProbe(() => this.refresh(), timings, now)
    // Primed at once, as upstream does while loading the file; a plugin not up yet is retried in the background.
    this.primed = this.probe.check().then(
      () => this.schedule(timings.pollHealthyMs),
      () => this.schedule(timings.pollUnhealthyMs),
    )
  }

  /** The health check: a fresh Status (reused for a while), which also rotates the seed when the key ID changed. */
  check(): Promise<void> {
    return this.probe.check()
  }

  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.client.close()
  }

  private schedule(ms: number): void {
    if (this.closed) return
    this.timer = backgroundTimer(ms, () => {
      this.refresh().then(
        () => this.schedule(this.timings.pollHealthyMs),
        () => this.schedule(this.timings.pollUnhealthyMs),
      )
    })
  }

  private async refresh(): Promise<void> {
    let status
    try {
      status = await this.client.status()
    } catch (err) {
      throw new Error(`failed to perform status section of the healthz check for KMS Provider ${this.name}, error: ${errorMessage(err)}`)
    }
    const problems: string[] = []
    if (status.healthz !== 'ok') problems.push(`got unexpected healthz status: ${status.healthz}`)
    if (!ACCEPTED_VERSIONS.includes(status.version)) problems.push(`expected KMSv2 API version v2, got ${status.version}`)
    else {
      this.version ??= status.version
      if (this.version !== status.version) {
        problems.push(`KMSv2 API version should not change after the initial status response version ${this.version}, got ${status.version}`)
      }
    }
    const keyId = keyIdProblem(status.keyId)
    if (keyId) problems.push(`got invalid KMSv2 KeyID hash ${JSON.stringify(await keyIdHash(status.keyId))}: ${keyId}`)
    else {
      try {
        await this.rotateOnKeyIdChange(status.keyId)
      } catch (err) {
        problems.push(errorMessage(err))
      }
    }
    if (problems.length) {
      throw new Error(`kmsv2 Provider ${this.name} is not healthy, error: ${problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`}`)
    }
  }

  /** Keeps the seed while the key ID is the same (extending its use for writes); otherwise has the plugin encrypt a new one. */
  private async rotateOnKeyIdChange(statusKeyId: string): Promise<void> {
    // Counted from before the call: the limit is an upper bound on writing with an unconfirmed key.
    const expiresAt = this.now() + this.timings.writeSeedTtlMs
    if (this.state && this.state.source.keyId === statusKeyId) {
      this.state.expiresAt = expiresAt
      return
    }
    const seed = crypto.getRandomValues(new Uint8Array(SEED_BYTES))
    let problem: string
    try {
      const answer = await this.client.encrypt(crypto.randomUUID(), seed)
      const source: DekSource = {
        keyId: answer.keyId,
        encryptedDEKSource: answer.ciphertext,
        annotations: answer.annotations,
        encryptedDEKSourceType: DEK_SOURCE_HKDF_SEED,
      }
      validateEncryptedObject({ ...source, encryptedData: new Uint8Array(1) })
      if (answer.keyId === statusKeyId) {
        const transformer = seededGcmTransformer(seed)
        this.reads.set(cacheKey(source), transformer)
        this.state = { source, transformer, expiresAt }
        return
      }
      problem = `encrypt answered keyID hash ${JSON.stringify(await keyIdHash(answer.keyId))}`
    } catch (err) {
      problem = `failed to encrypt DEK, error: ${errorMessage(err)}`
    }
    throw new Error(`failed to rotate DEK: ${problem}, statusKeyIDHash=${JSON.stringify(await keyIdHash(statusKeyId))}`)
  }

  private async currentState(): Promise<WriteState> {
    if (!this.state) await this.primed
    // Upstream's wording when no seed was ever obtained from the plugin.
    if (!this.state) throw new Error('got unexpected nil transformer')
    return this.state
  }

  async toStorage(bytes: Uint8Array, context: DataContext): Promise<Uint8Array> {
    const state = await this.currentState()
    const now = this.now()
    if (now > state.expiresAt) {
      throw new Error(
        `encryptedDEKSource with keyID hash ${JSON.stringify(await keyIdHash(state.source.keyId))} expired at ${new Date(state.expiresAt).toISOString()} (current time is ${new Date(now).toISOString()})`,
      )
    }
    const object: EncryptedObject = { ...state.source, encryptedData: await state.transformer.toStorage(bytes, context) }
    validateEncryptedObject(object)
    return encodeEncryptedObject(object)
  }

  async fromStorage(data: Uint8Array, context: DataContext): Promise<FromStorage> {
    const object = decodeEncryptedObject(data)
    validateEncryptedObject(object)
    const state = await this.currentState()
    const key = cacheKey(object)
    let transformer = this.reads.get(key)
    if (!transformer) {
      let plain: Uint8Array
      try {
        plain = await this.client.decrypt(crypto.randomUUID(), { ciphertext: object.encryptedDEKSource, keyId: object.keyId, annotations: object.annotations })
      } catch (err) {
        throw new Error(`failed to decrypt DEK, error: ${errorMessage(err)}`)
      }
      transformer = readTransformer(object, plain)
      this.reads.set(key, transformer)
    }
    const read = await transformer.fromStorage(object.encryptedData, context)
    const current = state.source
    return { bytes: read.bytes, stale: read.stale || object.keyId !== current.keyId || object.encryptedDEKSourceType !== current.encryptedDEKSourceType }
  }
}
