/**
 * AlwaysDeny: refuses every write, in both phases, with upstream's message.
 * Deprecated upstream (meant for tests); its construction warns.
 */
import type { Logger } from '../../logging/logger.js'
import type { AdmissionAttributes } from '../attributes.js'

import { type BothPhases, refuse } from './pods.js'

export const ALWAYS_DENY_MESSAGE = 'admission control is denying all modifications'

export function alwaysDeny(logger: Logger): BothPhases {
  logger.warn({ plugin: 'AlwaysDeny' }, 'the AlwaysDeny admission plugin is deprecated: it refuses every write; remove it from the enabled plugins')
  const deny = (a: AdmissionAttributes): never => {
    throw refuse(a, ALWAYS_DENY_MESSAGE)
  }
  return { name: 'AlwaysDeny', handles: () => true, admit: deny, validate: deny }
}
