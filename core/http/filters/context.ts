/** What the filters put on a request's context for those after them. */
import type { RequestAudit } from '../../audit/auditor.js'
import type { AuthNotes } from '../../authn/authenticator.js'
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
  /**
   * What authentication noted of the request: its annotations go to the
   * request's audit events; its warnings to the answer's Warning headers,
   * first, written by whoever takes them out (the resource handler, with its
   * own), else by the authentication filter once the answer is made.
   */
  authNotes?: AuthNotes
  /** Set by the chain's last filter: the request got past every filter to its handler (the request metrics count only those). */
  handlerReached?: boolean
  /**
   * The answer is another server's, relayed as it came (an aggregated API, a peer, a node agent's proxy):
   * the filters that rewrite this server's own answers leave its body alone, as upstream's proxies do.
   */
  relayed?: boolean
  /**
   * A signal aborted when a non-long-running request's deadline passes
   * (timeout.ts): what a handler asks of another server on the request's
   * behalf (an aggregated API, a peer) is given up then, as upstream's
   * request context is cancelled. Made when first asked for: most requests
   * never ask, and an AbortSignal is some 3 µs to make.
   */
  deadline?: () => AbortSignal
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

/**
 * Puts `answer` in place of the context's answer as it is. Hono's setter
 * would wrap it in another Response carrying the old one's headers, whose
 * body is then a stream: an answer of text in hand would lose its kept size
 * (response-size.ts) and be written through stream stages.
 */
export function replaceAnswer(c: { res: Response | undefined }, answer: Response): void {
  c.res = undefined
  c.res = answer
}
