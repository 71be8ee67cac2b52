/** What the filters put on a request's context for those after them. */
import type { ConnectionInfo } from '../../ports.js'
import type { UserInfo } from '../../resources/object.js'
import type { RequestInfo } from '../request-info.js'

export interface FilterVariables {
  requestInfo: RequestInfo
  user: UserInfo
}

export interface FilterBindings {
  /** Set by runtime adapters; absent for in-process calls. */
  connection?: ConnectionInfo
}

export interface ChainEnv {
  Variables: FilterVariables
  Bindings: FilterBindings
}
