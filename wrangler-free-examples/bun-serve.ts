/**
 * The server embedded in a Bun program with `Bun.serve`, no CLI around it.
 *
 * Run:
 *   npx bun wrangler-free-examples/bun-serve.ts
 *   curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8080/api/v1/namespaces
 *
 * Bun does not show a request's client certificate to the handler, so the
 * example authenticates with a static bearer token (runtimes/bun/serve.ts has
 * the full adapter with TLS). Plain HTTP, so it binds loopback only.
 */
import { env } from 'node:process'
import { ADMIN_IDENTITY, createApiServer } from 'kube-apiserver-ts'

// Only what this file uses of Bun's API: the tree type-checks without bun-types.
interface BunServer {
  port: number
  requestIP(request: Request): { address: string } | null
}
declare const Bun: {
  serve(options: { hostname: string; port: number; fetch(request: Request, server: BunServer): Promise<Response> }): BunServer
}

const token = env['APISERVER_TOKEN'] ?? crypto.randomUUID()
const server = createApiServer({ authentication: { clientCertificates: false, tokens: [{ token, user: ADMIN_IDENTITY }] } })

const listener = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(env['PORT'] ?? 8080),
  // Always pass connection info: it marks the request as one from the network.
  fetch: (request, bun) => server.fetch(request, { remoteAddress: bun.requestIP(request)?.address ?? '' }),
})
console.log(JSON.stringify({ url: `http://127.0.0.1:${listener.port}`, token }))
