/**
 * Apply conflicts and their 409 wording, as upstream's managedfields
 * conflict.go prints them: `Apply failed with 1 conflict: conflict with
 * "kubectl-client-side-apply" using apps/v1: .spec.replicas`, one
 * FieldManagerConflict cause per conflicting field.
 */
import { parseIdentifier } from './managed.js'
import { formatPath, type Path } from './path.js'

export interface ApplyConflict {
  /** the manager identity (JSON) that owns the field */
  manager: string
  path: Path
}

export interface ConflictCause {
  reason: 'FieldManagerConflict'
  message: string
  field: string
}

/** `"name"`, `"name" with subresource "status"`, and ` using <apiVersion>` for updaters. */
export function describeManager(identifier: string): string {
  const who = parseIdentifier(identifier)
  let text = JSON.stringify(who.manager ?? '')
  if (who.subresource) text += ` with subresource ${JSON.stringify(who.subresource)}`
  if (who.operation === 'Update') text += ` using ${who.apiVersion ?? ''}`
  return text
}

/** The Status message of a failed apply. */
export function conflictMessage(conflicts: readonly ApplyConflict[]): string {
  const [only] = conflicts
  if (conflicts.length === 1 && only) {
    return `Apply failed with 1 conflict: conflict with ${describeManager(only.manager)}: ${formatPath(only.path)}`
  }
  const byManager = new Map<string, Path[]>()
  for (const c of conflicts) {
    const paths = byManager.get(c.manager)
    if (paths) paths.push(c.path)
    else byManager.set(c.manager, [c.path])
  }
  const lines: string[] = []
  for (const manager of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${describeManager(manager)}:`)
    for (const p of byManager.get(manager) ?? []) lines.push(`- ${formatPath(p)}`)
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`
}

/** details.causes of the 409. */
export function conflictCauses(conflicts: readonly ApplyConflict[]): ConflictCause[] {
  return conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${describeManager(c.manager)}`,
    field: formatPath(c.path),
  }))
}

/** Thrown by applyObject when other managers own fields the configuration changes (409 Conflict). */
export class ApplyConflictError extends Error {
  override name = 'ApplyConflictError'
  readonly causes: ConflictCause[]

  constructor(readonly conflicts: readonly ApplyConflict[]) {
    super(conflictMessage(conflicts))
    this.causes = conflictCauses(conflicts)
  }
}

/**
 * Thrown when an applied configuration cannot be used: a wrong apiVersion,
 * managedFields in the body, duplicate or key-less list items, unknown
 * fields (400 Bad Request).
 */
export class ApplyInvalidError extends Error {
  override name = 'ApplyInvalidError'

  /**
   * `typing` when the configuration does not fit the type (upstream's
   * "failed to create typed patch object"), `request` for the other checks.
   */
  constructor(
    message: string,
    readonly problem: 'request' | 'typing' = 'request',
  ) {
    super(message)
  }
}
