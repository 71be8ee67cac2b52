/**
 * A node selector written as `key=value,key2=value2` (upstream's
 * ConvertSelectorToLabelsMap), as namespaces' annotations and the
 * PodNodeSelector configuration spell them.
 */
import { isQualifiedName, isValidLabelValue } from '../../machinery/names.js'

/** The labels, or the reason the text is not such a list. */
export function parseLabelMap(text: string): Record<string, string> | { error: string } {
  const labels: Record<string, string> = {}
  if (text === '') return labels
  for (const pair of text.split(',')) {
    const parts = pair.split('=')
    if (parts.length !== 2) return { error: `invalid selector: [${parts.join(' ')}]` }
    const key = (parts[0] ?? '').trim()
    const value = (parts[1] ?? '').trim()
    const keyProblems = isQualifiedName(key)
    if (keyProblems.length) return { error: `invalid label key "${key}": ${keyProblems.join('; ')}` }
    const valueProblems = isValidLabelValue(value)
    if (valueProblems.length) return { error: `invalid label value: "${value}": at key: "${key}": ${valueProblems.join('; ')}` }
    labels[key] = value
  }
  return labels
}
