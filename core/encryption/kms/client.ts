/**
 * The transport to a KMS plugin (spec: EncryptionConfiguration, `kms`): the
 * calls of upstream's k8s.io/kms gRPC services, v2 and v1beta1, without
 * their wire. The Node runtime supplies them over the plugin's unix socket;
 * core keeps the envelope formats, the DEK cache and the health logic.
 */

export interface KmsV2Status {
  /** The plugin's API version: `v2` (or `v2beta1`). */
  version: string
  /** `ok` when healthy; anything else is the reason it is not. */
  healthz: string
  /** The key the plugin encrypts with now; a change makes the server generate a new DEK seed. */
  keyId: string
}

export interface KmsV2Encrypted {
  ciphertext: Uint8Array
  keyId: string
  annotations: Record<string, Uint8Array>
}

export interface KmsV2Client {
  status(): Promise<KmsV2Status>
  encrypt(uid: string, plaintext: Uint8Array): Promise<KmsV2Encrypted>
  decrypt(uid: string, request: KmsV2Encrypted): Promise<Uint8Array>
  close(): void
}

export interface KmsV1Client {
  /** The plugin's API version (`v1beta1`); asked before the first use. */
  version(): Promise<string>
  encrypt(plain: Uint8Array): Promise<Uint8Array>
  decrypt(cipher: Uint8Array): Promise<Uint8Array>
  close(): void
}

export interface KmsEndpoint {
  /** The provider's name in the configuration. */
  name: string
  /** The unix socket of `endpoint` (`@name` for an abstract socket). */
  socketPath: string
  /** Every call's deadline (`timeout`, 3s by default). */
  timeoutMs: number
}

/** Builds clients for the configured plugins; nothing need be dialled before the first call. */
export interface KmsClientFactory {
  v1(endpoint: KmsEndpoint): KmsV1Client
  v2(endpoint: KmsEndpoint): KmsV2Client
}
