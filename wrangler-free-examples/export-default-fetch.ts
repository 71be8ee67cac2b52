/**
 * The module shape many runtimes serve by themselves: `export default { fetch }`.
 *
 * Run:
 *   npx bun wrangler-free-examples/export-default-fetch.ts            (Bun serves a default export with `fetch`)
 *   deno serve --host 127.0.0.1 --port 8080 wrangler-free-examples/export-default-fetch.ts
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
const server = createApiServer({ authentication: { clientCertificates: false, tokens: [{ token, user: ADMIN_IDENTITY }] } })
console.log(JSON.stringify({ url: 'http://127.0.0.1:8080', token }))

export default {
  // Read by Bun's auto-serve; deno serve takes --host/--port instead.
  hostname: '127.0.0.1',
  port: 8080,
  fetch(request: Request): Promise<Response> {
    return server.fetch(request, {})
  },
}
