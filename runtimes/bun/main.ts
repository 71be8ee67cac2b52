/**
 * Runs the API server under Bun:
 *
 *   bun runtimes/bun/main.ts [--port 6443] [--data-dir apiserver-data] [--plain-http]
 *
 * Objects live in the embedded durable store (SQLite through bun:sqlite) in
 * `--data-dir`, relative to the working directory by default, so that the
 * single-file binary keeps its data next to where it runs.
 * When listening it prints one JSON line on stdout, for people and for
 * programs that start it (test/e2e/bun.test.ts):
 *
 *   {"ready":true,"url":"https://127.0.0.1:40123","token":"…","caCertificate":"-----BEGIN CERTIFICATE-----…"}
 *
 * The token is the admin's bearer token (see serve.ts for why a token and not
 * a client certificate). It is made fresh at every start and lives only in memory.
 */
import { base64UrlEncode } from '../../core/encoding/base64.js'
import { ADMIN_IDENTITY, createApiServer } from '../../core/index.js'
import { codecFor } from '../../core/storage/codec.js'
import { serveBun } from './serve.js'
import { openEmbeddedStore } from './sqlite.js'
import { type BunTlsMaterial, generateLoopbackTls } from './tls.js'

interface BunFlags {
  port: number
  dataDir: string
  plainHttp: boolean
}

function parseArgs(argv: readonly string[]): BunFlags {
  const flags: BunFlags = { port: 6443, dataDir: 'apiserver-data', plainHttp: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ''
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    if (name === '--port') {
      const value = inline ?? argv[++i]
      const port = Number(value)
      if (value === undefined || !/^\d+$/.test(value) || port > 65535) {
        throw new Error(`invalid argument ${JSON.stringify(value ?? '')} for "--port" flag: must be between 0 and 65535 (0 picks a free port)`)
      }
      flags.port = port
    } else if (name === '--data-dir') {
      const value = inline ?? argv[++i]
      if (!value) throw new Error('flag needs an argument: --data-dir')
      flags.dataDir = value
    } else if (name === '--plain-http') {
      flags.plainHttp = inline === undefined || inline === 'true'
    } else {
      throw new Error(`unknown flag: ${name}`)
    }
  }
  return flags
}

/** 256 random bits, base64url: a bearer token nobody can guess. */
function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return base64UrlEncode(bytes)
}

async function main(): Promise<void> {
  const flags = parseArgs(process.argv.slice(2))
  const token = randomToken()
  let tls: BunTlsMaterial | undefined
  if (!flags.plainHttp) {
    try {
      tls = await generateLoopbackTls()
    } catch (err) {
      // Serving stays possible: plain HTTP, and serve.ts keeps it on loopback.
      process.stderr.write(`cannot make a TLS certificate (${err instanceof Error ? err.message : String(err)}); serving plain HTTP on 127.0.0.1\n`)
    }
  }
  const storage = await openEmbeddedStore({ dataDir: flags.dataDir, codec: codecFor('application/vnd.kubernetes.protobuf') })
  const server = createApiServer(
    { authentication: { clientCertificates: false, tokens: [{ token, user: ADMIN_IDENTITY }] } },
    { storage },
  )
  await server.ready
  const listener = serveBun(server, { hostname: '127.0.0.1', port: flags.port, ...(tls ? { tls: { key: tls.key, cert: tls.cert } } : {}) })
  // The `kubernetes` service points at the port actually listened on (`--port 0` picks one).
  await server.setSecurePort(Number(new URL(listener.url).port))
  process.stdout.write(`${JSON.stringify({ ready: true, url: listener.url, token, ...(tls ? { caCertificate: tls.caCertificate } : {}) })}\n`)

  const stop = async (): Promise<void> => {
    await server.shutdown()
    await listener.close()
    await storage.close()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop())
  process.once('SIGINT', () => void stop())
}

main().catch((err: unknown) => {
  process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
