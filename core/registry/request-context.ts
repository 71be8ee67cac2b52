import type { UserInfo } from '../resources/object.js'

/** What the registry knows about the request it serves. */
export interface RequestContext {
  user: UserInfo
  now: Date
  /** `dryRun=All`: run every step but the write. */
  dryRun: boolean
}
