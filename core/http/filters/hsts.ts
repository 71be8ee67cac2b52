/**
 * `--strict-transport-security-directives` (upstream: WithHSTS): every
 * answer carries `Strict-Transport-Security` with the directives joined by
 * "; ". The flag's rules have checked each directive.
 */
import type { MiddlewareHandler } from 'hono'
import { setAnswerHeader } from '../answer-headers.js'
import type { ChainEnv } from './context.js'

export function hstsFilter(directives: readonly string[]): MiddlewareHandler<ChainEnv> | undefined {
  if (directives.length === 0) return undefined
  const value = directives.join('; ')
  return async (c, next) => {
    await next()
    setAnswerHeader(c.res, 'strict-transport-security', value)
  }
}
