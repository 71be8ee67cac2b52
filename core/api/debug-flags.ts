/**
 * `/debug/flags/` (`--profiling`, and the debug socket): upstream's one
 * flag that may change at run time, `v`, the log verbosity. `PUT
 * /debug/flags/v` with the new level as the whole body sets it as klog's
 * Level.Set reads it (a base-10 int32), and answers as upstream's
 * StringFlagPutHandler does: 200 `successfully set klog.logging.verbosity to
 * N`, 400 with strconv's error for a body that is no level, 406 for any
 * other method. Every other path under `/debug/flags` is the index page.
 * Behind the chain these are non-resource paths (`put` on
 * `/debug/flags/v`), so only users allowed them (system:masters by
 * default) may change the verbosity.
 */
import type { Env, Hono } from 'hono'
import { sizedResponse } from '../http/respond.js'
import { goStrconvQuote } from '../machinery/go-strconv.js'

/** The flags that may be set here, as upstream registers them. */
const FLAGS = ['v']

/** Upstream's index template, rendered with its one flag. */
const INDEX = `<html>
<head>
<title>/debug/flags/</title>
</head>
<body>
/debug/flags/<br>
<br>
flags:<br>
<table>
${FLAGS.map((flag) => `\n<tr>${flag}<br>\n`).join('')}
</table>
<br>
full flags configurable<br>
</body>
</html>
`

/** Upstream's writePlainText: the text and a newline, as `text/plain`. */
function plainText(status: number, text: string): Response {
  return sizedResponse(`${text}\n`, { status, headers: { 'content-type': 'text/plain', 'x-content-type-options': 'nosniff' } })
}

const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1
/** Past this the unsigned scan of a 32-bit parse stops with a range error, before any byte after it. */
const UINT32_MAX = 2 ** 32 - 1

/**
 * strconv.ParseInt(text, 10, 32): a sign, then decimal digits; the value,
 * or Go's error (`strconv.ParseInt: parsing "x": invalid syntax`, `...:
 * value out of range`).
 */
export function parseGoInt32(text: string): number | string {
  const error = (reason: string): string => `strconv.ParseInt: parsing ${goStrconvQuote(text)}: ${reason}`
  if (text === '') return error('invalid syntax')
  const negative = text[0] === '-'
  const digits = text[0] === '+' || negative ? text.slice(1) : text
  if (digits === '') return error('invalid syntax')
  let n = 0
  for (const c of digits) {
    if (c < '0' || c > '9') return error('invalid syntax')
    n = n * 10 + (c.charCodeAt(0) - 48)
    if (n > UINT32_MAX) return error('value out of range')
  }
  const value = negative ? -n : n
  return value < INT32_MIN || value > INT32_MAX ? error('value out of range') : value
}

/** upstream's GlogSetter: the level from the body, or why not. */
async function setVerbosity(request: Request, set: (level: number) => void): Promise<Response> {
  let body: string
  try {
    body = await request.text()
  } catch (err) {
    return plainText(400, `error reading request body: ${(err as Error).message}`)
  }
  const level = parseGoInt32(body)
  if (typeof level === 'string') return plainText(400, `failed set klog.logging.verbosity ${body}: ${level}`)
  set(level)
  return plainText(200, `successfully set klog.logging.verbosity to ${body}`)
}

/** `/debug/flags`, its index and `v`; `setVerbosity` changes the log verbosity (`-v`) of this process. */
export function installDebugFlagsRoutes<E extends Env>(app: Hono<E>, setVerbosityLevel: (level: number) => void): void {
  const index = (): Response => sizedResponse(INDEX, { headers: { 'content-type': 'text/html; charset=utf-8' } })
  app.all('/debug/flags', index)
  // One wildcard route: hono's compiled router takes no fixed name beside it at the same place.
  app.all('/debug/flags/*', (c) => {
    if (c.req.path !== '/debug/flags/v') return index()
    if (c.req.method !== 'PUT') return plainText(406, 'unsupported http method')
    return setVerbosity(c.req.raw, setVerbosityLevel)
  })
}
