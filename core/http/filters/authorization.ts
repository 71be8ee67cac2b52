import type { MiddlewareHandler } from 'hono'
import { type Authorizer, attributesOf, forbiddenMessage } from '../../authz/authorizer.js'
import { queryOf } from '../query.js'
import { StatusError } from '../../machinery/status-error.js'
import type { ChainEnv } from './context.js'

/** Authorization: may this user do this; 403 Forbidden as upstream words it when not. */
export function authorizationFilter(authorizer: Authorizer): MiddlewareHandler<ChainEnv> {
  return async (c, next) => {
    const info = c.get('requestInfo')
    const fieldSelector = info.isResourceRequest ? queryOf(c.req.raw).get('fieldSelector') : null
    const attrs = { ...attributesOf(c.get('user'), info), ...(fieldSelector ? { fieldSelector } : {}) }
    const { decision, reason } = await authorizer.authorize(attrs)
    const audit = c.get('audit')
    if (audit) {
      audit.annotations['authorization.k8s.io/decision'] = decision === 'allow' ? 'allow' : 'forbid'
      audit.annotations['authorization.k8s.io/reason'] = reason
    }
    if (decision !== 'allow') {
      const message = forbiddenMessage(attrs) + (reason ? `: ${reason}` : '')
      const details = info.isResourceRequest
        ? { ...(info.name ? { name: info.name } : {}), ...(info.apiGroup ? { group: info.apiGroup } : {}), kind: info.resource }
        : {}
      const subject = info.isResourceRequest
        ? `${info.apiGroup ? `${info.resource}.${info.apiGroup}` : info.resource}${info.name ? ` ${JSON.stringify(info.name)}` : ''} is forbidden: `
        : 'forbidden: '
      throw new StatusError(403, 'Forbidden', subject + message, details)
    }
    await next()
  }
}
