/**
 * The module shape many runtimes serve by themselves: `export default { fetch }`.
 *
 * Run:
 *   npx bun wrangler-free-examples/export-default-fetch.ts            (Bun serves a default export with `fetch`)
 *   deno serve --node-modules-dir=manual --allow-net --allow-env --allow-read --host 127.0.0.1 --port 8080 wrangler-free-examples/export-default-fetch.ts
 *
 * Then: curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8080/api/v1/namespaces
 *
 * The runtime calls `fetch(request, somethingOfItsOwn)`; that second argument
 * must never reach the core as connection info. An explicit `{}` marks the
 * request as coming over the network, so it needs the token (no
 * `embeddedIdentity` is set, so even a forgotten `{}` would only make the
 * request anonymous).
 * Plain HTTP, hence loopback only.
 */
import { env } from 'node:process'
import { ADMIN_IDENTITY, createApiServer } from 'kube-apiserver-ts'

const token = env['APISERVER_TOKEN'] ?? crypto.randomUUID()
const port = Number(env['PORT'] ?? 8080)
const server = createApiServer({ authentication: { clientCertificates: false, tokens: [{ token, user: ADMIN_IDENTITY }] } })
// Printed before the runtime listens: a client retries its first connection.
console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, token }))

export default {
  // Read by Bun's auto-serve; deno serve takes --host/--port instead (give it the same port as PORT).
  hostname: '127.0.0.1',
  port,
  fetch(request: Request): Promise<Response> {
    return server.fetch(request, {})
  },
}
