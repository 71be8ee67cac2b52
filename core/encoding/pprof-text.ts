/**
 * A profile as plain text, for `?debug=1` (Go's net/http/pprof answers a
 * readable form then): the totals, then each sample's values over its
 * stack, largest first. Made from the same SampledProfile as the protobuf,
 * so it holds nothing the binary form does not.
 */
import type { ProfileSample, SampledProfile } from './pprof.js'

function frameLine(frame: ProfileSample['stack'][number]): string {
  const where = frame.fileName ? ` ${frame.fileName}${frame.line ? `:${frame.line}${frame.column ? `:${frame.column}` : ''}` : ''}` : ''
  return `#\t${frame.functionName}${where}`
}

export function renderProfileText(name: string, profile: SampledProfile): string {
  const types = profile.sampleTypes.map((t) => `${t.type}/${t.unit}`)
  const totals = profile.sampleTypes.map((_, i) => profile.samples.reduce((sum, s) => sum + (s.values[i] ?? 0), 0))
  // Sorted by the type pprof shows by default: the named one, else the last.
  const named = profile.sampleTypes.findIndex((t) => t.type === profile.defaultSampleType)
  const key = named >= 0 ? named : profile.sampleTypes.length - 1
  const samples = [...profile.samples].sort((a, b) => (b.values[key] ?? 0) - (a.values[key] ?? 0))
  const lines = [
    `${name} profile: ${profile.samples.length} stacks; ${types.map((t, i) => `${t} ${totals[i]}`).join(', ')}`,
    `sampling period: ${profile.period} ${profile.periodType.unit} (${profile.periodType.type})`,
    ...(profile.comments ?? []).map((c) => `# ${c}`),
    '',
  ]
  for (const sample of samples) {
    lines.push(`${sample.values.join(' ')} @`)
    for (const frame of sample.stack) lines.push(frameLine(frame))
    lines.push('')
  }
  return lines.join('\n')
}
