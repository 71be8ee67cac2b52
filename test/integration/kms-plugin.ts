/**
 * A small real KMS plugin for tests: a gRPC server on a unix socket in a
 * temporary directory, speaking upstream's KeyManagementService v2 and
 * v1beta1, that wraps data with a local AES-256-GCM key (nonce, ciphertext,
 * tag). A test can change its key ID, stop it (the socket goes away, as a
 * crashed plugin's does) and start it again on the same socket, and count
 * its calls. `unwrap` opens what it wrapped, for test-side decryption;
 * `misanswer` makes Decrypt (v2 and v1) answer other bytes than it opened.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadPackageDefinition, Server, ServerCredentials, status, type ServiceDefinition } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'

const proto = (file: string): string => new URL(`../../runtimes/node/proto/${file}`, import.meta.url).pathname

export interface TestKmsPlugin {
  socketPath: string
  /** `unix://` endpoint for an EncryptionConfiguration. */
  endpoint: string
  /** The key ID that Status and Encrypt report (v2); change it to rotate. */
  keyId: string
  /** Healthz that Status reports (v2). */
  healthz: string
  calls: { status: number; encrypt: number; decrypt: number; version: number }
  /** While set, what Decrypt answers instead of the bytes it opened (a misbehaving plugin). */
  misanswer: ((opened: Buffer) => Buffer) | undefined
  /** Wraps with the plugin's key (what Encrypt answers). */
  wrap(plain: Uint8Array): Buffer
  unwrap(wrapped: Uint8Array): Buffer
  /** Stops serving and removes the socket. */
  stop(): Promise<void>
  /** Serves again on the same socket. */
  start(): Promise<void>
  close(): Promise<void>
}

type Handler = (call: { request: any }, callback: (err: { code: number; details: string } | null, answer?: unknown) => void) => void

export async function startKmsPlugin(): Promise<TestKmsPlugin> {
  const dir = mkdtempSync(join(tmpdir(), 'kms-plugin-'))
  const socketPath = join(dir, 'kms.sock')
  const kek = randomBytes(32)
  const load = (file: string) =>
    loadPackageDefinition(loadSync(proto(file), { keepCase: false, longs: Number, defaults: true })) as unknown as Record<
      string,
      { KeyManagementService: { service: ServiceDefinition } }
    >
  const v2 = load('kms-v2.proto').v2!.KeyManagementService.service
  const v1 = load('kms-v1beta1.proto').v1beta1!.KeyManagementService.service

  const plugin: TestKmsPlugin = {
    socketPath,
    endpoint: `unix://${socketPath}`,
    keyId: 'key-1',
    healthz: 'ok',
    calls: { status: 0, encrypt: 0, decrypt: 0, version: 0 },
    misanswer: undefined,
    wrap(plain) {
      const nonce = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', kek, nonce)
      return Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
    },
    unwrap(wrapped) {
      const data = Buffer.from(wrapped)
      const decipher = createDecipheriv('aes-256-gcm', kek, data.subarray(0, 12))
      decipher.setAuthTag(data.subarray(data.length - 16))
      return Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()])
    },
    stop: async () => {},
    start: async () => {},
    close: async () => {},
  }

  const refuse = (callback: Parameters<Handler>[1], err: unknown) => callback({ code: status.INVALID_ARGUMENT, details: String(err) })
  const v2Handlers: Record<string, Handler> = {
    Status: (_call, callback) => {
      plugin.calls.status++
      callback(null, { version: 'v2', healthz: plugin.healthz, keyId: plugin.keyId })
    },
    Encrypt: (call, callback) => {
      plugin.calls.encrypt++
      callback(null, { ciphertext: plugin.wrap(call.request.plaintext), keyId: plugin.keyId, annotations: { 'wrapped-by.kms.example.com': Buffer.from('test') } })
    },
    Decrypt: (call, callback) => {
      plugin.calls.decrypt++
      try {
        const opened = plugin.unwrap(call.request.ciphertext)
        callback(null, { plaintext: plugin.misanswer ? plugin.misanswer(opened) : opened })
      } catch (err) {
        refuse(callback, err)
      }
    },
  }
  const v1Handlers: Record<string, Handler> = {
    Version: (_call, callback) => {
      plugin.calls.version++
      callback(null, { version: 'v1beta1', runtimeName: 'test-kms', runtimeVersion: '0.1.0' })
    },
    Encrypt: (call, callback) => {
      plugin.calls.encrypt++
      callback(null, { cipher: plugin.wrap(call.request.plain) })
    },
    Decrypt: (call, callback) => {
      plugin.calls.decrypt++
      try {
        const opened = plugin.unwrap(call.request.cipher)
        callback(null, { plain: plugin.misanswer ? plugin.misanswer(opened) : opened })
      } catch (err) {
        refuse(callback, err)
      }
    },
  }

  let server: Server | undefined
  plugin.start = async () => {
    const s = new Server()
    s.addService(v2, v2Handlers as never)
    s.addService(v1, v1Handlers as never)
    await new Promise<void>((resolve, reject) => s.bindAsync(`unix:${socketPath}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())))
    server = s
  }
  plugin.stop = async () => {
    const s = server
    server = undefined
    if (s) s.forceShutdown()
    rmSync(socketPath, { force: true })
  }
  plugin.close = async () => {
    await plugin.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  await plugin.start()
  return plugin
}
