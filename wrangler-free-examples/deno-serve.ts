/**
 * The server embedded in a Deno program with `Deno.serve`.
 *
 * Run (Deno 2 reads the package from node_modules through package.json; build first):
 *   npm run build
 *   deno run --node-modules-dir=manual --allow-net --allow-env --allow-read wrangler-free-examples/deno-serve.ts
 *   curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8080/api/v1/namespaces
 *
 * Deno.serve cannot request client certificates, so this uses a static
 * bearer token over plain HTTP, bound to loopback only.
 */
import { ADMIN_IDENTITY, createApiServer } from 'kube-apiserver-ts'

// Only what this file uses of Deno's API, declared so `tsc` checks the file without Deno's types.
interface DenoServeHandlerInfo {
  remoteAddr: { hostname: string; port: number }
}
declare const Deno: {
  env: { get(name: string): string | undefined }
  serve(
    options: { hostname: string; port: number; onListen?(addr: { hostname: string; port: number }): void },
    handler: (request: Request, info: DenoServeHandlerInfo) => Promise<Response>,
  ): { finished: Promise<void> }
}

const token = Deno.env.get('APISERVER_TOKEN') ?? crypto.randomUUID()
const server = createApiServer({ authentication: { clientCertificates: false, tokens: [{ token, user: ADMIN_IDENTITY }] } })

Deno.serve(
  {
    hostname: '127.0.0.1',
    port: Number(Deno.env.get('PORT') ?? 8080),
    onListen: ({ hostname, port }) => console.log(JSON.stringify({ url: `http://${hostname}:${port}`, token })),
  },
  // Always pass connection info: it marks the request as one from the network.
  (request, info) => server.fetch(request, { remoteAddress: info.remoteAddr.hostname }),
)
