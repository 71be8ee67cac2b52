/**
 * AlwaysAdmit: lets every request through. Upstream keeps it only as a
 * deprecated no-op, and says so when it is built.
 */
import type { BothPhases } from './pods.js'
import type { Logger } from '../../logging/logger.js'

export function alwaysAdmit(logger: Logger): BothPhases {
  logger.warn({ plugin: 'AlwaysAdmit' }, 'the AlwaysAdmit admission plugin is deprecated: it changes nothing; remove it from the enabled plugins')
  return { name: 'AlwaysAdmit', handles: () => true, admit: () => {}, validate: () => {} }
}
