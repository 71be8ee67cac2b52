/**
 * The server as a plain function: no port, no TLS, no process. This is the
 * shape for unit tests of controllers and tools.
 *
 * Run (after `npm run build`, which the package self-reference resolves to):
 *   node --import tsx wrangler-free-examples/in-process-fetch.ts
 *
 * Requests handed to `fetch` without connection info come from this program
 * itself; it opts in to running them as the admin (system:masters). Without
 * `embeddedIdentity` they would be anonymous, as a request from the network is.
 */
import { ADMIN_IDENTITY, createApiServer } from 'kube-apiserver-ts'

const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
await server.ready

const base = 'http://in-process/api/v1/namespaces/default/configmaps'
const json = { 'content-type': 'application/json' }

const created = await server.fetch(
  new Request(base, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { mode: 'fast' } }),
  }),
)
const object = (await created.json()) as { metadata: { name: string; resourceVersion: string } }
console.log(`create: ${created.status} ${object.metadata.name} resourceVersion=${object.metadata.resourceVersion}`)

const listed = await server.fetch(new Request(base))
const list = (await listed.json()) as { kind: string; items: { metadata: { name: string }; data?: Record<string, string> }[] }
console.log(`list: ${listed.status} ${list.kind} [${list.items.map((i) => `${i.metadata.name}=${JSON.stringify(i.data ?? {})}`).join(', ')}]`)

await server.shutdown()
