/** What the filters put on a request's context for those after them. */
import type { RequestAudit } from '../../audit/auditor.js'
import type { ConnectionInfo } from '../../ports.js'
import type { UserInfo } from '../../machinery/object.js'
import type { RequestInfo } from '../../machinery/request-info.js'

export interface FilterVariables {
  requestInfo: RequestInfo
  user: UserInfo
  /** The request's audit ID (`Audit-ID`), set first. */
  auditID: string
  /** The request's audit record, when the policy keeps it. */
  audit?: RequestAudit
  /** Set by the chain's last filter: the request got past every filter to its handler (the request metrics count only those). */
  handlerReached?: boolean
  /**
   * The answer is another server's, relayed as it came (an aggregated API, a peer, a node agent's proxy):
   * the filters that rewrite this server's own answers leave its body alone, as upstream's proxies do.
   */
  relayed?: boolean
}

export interface FilterBindings {
  /** Set by runtime adapters; absent for in-process calls. */
  connection?: ConnectionInfo
  /** The server's own requests (seeding objects) run as this user; never set from a transport. */
  internalUser?: UserInfo
}

export interface ChainEnv {
  Variables: FilterVariables
  Bindings: FilterBindings
}
