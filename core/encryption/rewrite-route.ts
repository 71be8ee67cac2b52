/**
 * `POST /encryption/rewrite`: the rewrite of every stale stored value with
 * the current first provider (core/encryption/rewrite.ts), an endpoint of
 * the server rather than a client command because only the server holds the
 * keys and knows which provider writes. It is a non-resource path behind the
 * whole chain, so only a user allowed the verb `post` on it may run it
 * (system:masters; in RBAC, a rule with `nonResourceURLs:
 * ["/encryption/rewrite"]` and `verbs: ["post"]`), and it is audited like
 * any request. The answer is plain text streamed as the rewrite goes:
 * progress lines, then `done:` with the counts. `?resources=secrets,
 * widgets.example.com` limits it to those resources.
 */
import type { Hono } from 'hono'
import type { ChainEnv } from '../http/filters/context.js'
import { statusResponse } from '../http/respond.js'
import { badRequest, qualifiedResource } from '../machinery/status-error.js'
import type { Logger } from '../logging/logger.js'
import { type RewriteCounts, rewriteStaleValues, type RewriteOptions, type RewriteTarget } from './rewrite.js'

export const REWRITE_PATH = '/encryption/rewrite'

export interface RewriteRouteDeps extends RewriteOptions {
  /** The resources the encryption configuration in effect covers, with their storage, at the time of the request. */
  targets(): RewriteTarget[]
  /** Told who started each rewrite and how it ended, for the server's log. */
  logger?: Logger
}

function linesStream(lines: AsyncGenerator<string, RewriteCounts | undefined>, onDone: (counts: RewriteCounts | undefined) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    // One line per pull: the rewrite goes no faster than its reader, and stops when the reader goes.
    async pull(controller) {
      const next = await lines.next()
      if (next.done) {
        onDone(next.value)
        controller.close()
      } else controller.enqueue(encoder.encode(`${next.value}\n`))
    },
    async cancel() {
      await lines.return(undefined)
      onDone(undefined)
    },
  })
}

export function installEncryptionRewriteRoute(app: Hono<ChainEnv>, deps: RewriteRouteDeps): void {
  app.post(REWRITE_PATH, (c) => {
    let targets = deps.targets()
    const asked = c.req.query('resources')
    if (asked !== undefined) {
      const names = asked.split(',').map((n) => n.trim()).filter(Boolean)
      const unknown = names.filter((n) => !targets.some((t) => qualifiedResource(t) === n))
      if (unknown.length || !names.length) {
        return statusResponse(badRequest(`resources to rewrite must be among those the encryption configuration covers (${targets.map(qualifiedResource).join(', ')}); not: ${unknown.join(', ') || '(none given)'}`))
      }
      targets = targets.filter((t) => names.includes(qualifiedResource(t)))
    }
    const options = deps.pageSize ? { pageSize: deps.pageSize } : {}
    const user = c.get('user')?.username
    const resources = targets.map(qualifiedResource)
    deps.logger?.info({ user, resources }, 'rewriting stale encrypted values')
    const onDone = (counts: RewriteCounts | undefined) =>
      counts
        ? deps.logger?.info({ user, resources, ...counts }, 'rewrote stale encrypted values')
        : deps.logger?.info({ user, resources }, 'the rewrite of stale encrypted values stopped: its client went away')
    return new Response(linesStream(rewriteStaleValues(targets, options), onDone), {
      headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' },
    })
  })
}
