/**
 * What both webhook plugins do with an answer: its warnings go to the
 * client's Warning headers, its audit annotations (prefixed with the
 * webhook's name, as upstream keys them) to the request's audit event.
 */
import type { AdmissionAttributes } from '../attributes.js'
import type { AdmissionAnswer } from './review.js'
import { appendAll } from '../../machinery/append-all.js'

/** Side effects a webhook may declare and still be called on a dry run. */
export function sideEffectsAllowDryRun(sideEffects: string): boolean {
  return sideEffects === 'None' || sideEffects === 'NoneOnDryRun'
}

export function recordAnswer(a: AdmissionAttributes, webhookName: string, answer: AdmissionAnswer): void {
  appendAll(a.warnings, answer.warnings)
  if (!a.auditAnnotations) return
  for (const [key, value] of Object.entries(answer.auditAnnotations)) a.auditAnnotations[`${webhookName}/${key}`] = value
}
