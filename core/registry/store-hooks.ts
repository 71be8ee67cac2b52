/**
 * Per-resource hooks around the store's writes (upstream's BeginCreate,
 * BeginUpdate and AfterDelete of the generic store): what a write takes
 * outside the object itself (a Service's cluster IPs and node ports) is
 * taken right before the write, once admission and validation passed, and
 * given back when the write fails or is a dry run.
 */
import type { KubeObject } from '../machinery/object.js'
import type { RequestContext } from './request-context.js'

/** Told how the write ended: true once stored, false when it failed or was a dry run. Called once. */
export type FinishWrite = (success: boolean) => void

export interface StoreHooks {
  /** Before a create is written; may fill in `obj` (the values it takes) or throw to refuse it. */
  beginCreate?(obj: KubeObject, ctx: RequestContext): FinishWrite
  /** Before an update of `old` is written; as beginCreate. A retried update is finished (false) before it begins again. */
  beginUpdate?(obj: KubeObject, old: KubeObject, ctx: RequestContext): FinishWrite
  /** Once an object is gone from storage. */
  afterDelete?(obj: KubeObject, ctx: RequestContext): void
}

export const finishNothing: FinishWrite = () => {}

/** Finishes a write once, whichever way it ends first. */
export function once(finish: FinishWrite): FinishWrite {
  let done = false
  return (success) => {
    if (done) return
    done = true
    finish(success)
  }
}
