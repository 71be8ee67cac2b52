/**
 * `/logs/` (`--enable-logs-handler`, deprecated upstream): the files of the
 * runtime's log directory, as upstream's file server shows /var/log — a
 * directory as a list of links, a file as plain text. Behind the chain it is
 * a non-resource path like any other, so only users allowed `get` on
 * `/logs/*` (cluster administrators by default) read it. Paths never leave
 * the directory: `..` segments are refused here, links by the runtime.
 */
import type { Env, Hono } from 'hono'
import type { LogFiles } from '../ports.js'
import { sizedResponse } from '../http/respond.js'

const NOT_FOUND = () => sizedResponse('404 page not found\n', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' } })

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)
}

/** The path under the directory, decoded, or undefined when it tries to climb out. */
export function logFilePath(pathname: string): string | undefined {
  let relative: string
  try {
    relative = decodeURIComponent(pathname.slice('/logs/'.length))
  } catch {
    return undefined
  }
  const segments = relative.split('/')
  if (segments.some((s) => s === '..' || s.includes('\0'))) return undefined
  return segments.filter((s) => s !== '' && s !== '.').join('/')
}

export function installLogsRoutes<E extends Env>(app: Hono<E>, files: LogFiles): void {
  app.get('/logs', (c) => c.redirect('/logs/', 301))
  app.get('/logs/*', async (c) => {
    const pathname = new URL(c.req.url).pathname
    const path = logFilePath(pathname)
    if (path === undefined) return NOT_FOUND()
    const found = await files.read(path)
    if (!found) return NOT_FOUND()
    if (found.kind === 'directory') {
      // As a file server does: a directory's links are relative, so its URL ends in a slash.
      if (!pathname.endsWith('/')) return c.redirect(`${pathname}/`, 301)
      const links = found.entries.map((name) => `<a href="${escapeHtml(encodeURIComponent(name.replace(/\/$/, '')) + (name.endsWith('/') ? '/' : ''))}">${escapeHtml(name)}</a>\n`)
      return sizedResponse(`<pre>\n${links.join('')}</pre>\n`, { headers: { 'content-type': 'text/html; charset=utf-8', 'x-content-type-options': 'nosniff' } })
    }
    return new Response(found.body, {
      headers: { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(found.size), 'x-content-type-options': 'nosniff' },
    })
  })
}
