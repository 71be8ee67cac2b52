/**
 * Rules about versions (spec: "Versioning", "Errors" 4 and 5): the
 * emulated and minimum compatibility versions, the forward-compatibility
 * switches, `--runtime-config`, the hidden metrics version and the feature
 * gate prefixes. The server's own version is the one /version reports.
 */
import { API_GROUPS, introducedInMinor, runtimeConfigGroupVersion, VERSION_SET_KEYS } from '../../../resources/api-versions.js'
import type { FlagValues } from '../table.js'
import { ok, parseBool } from '../values.js'
import { compareMajorMinor, formatMajorMinor, KUBE_COMPONENT, type MajorMinor, minorsBefore, serverMajorMinor } from '../versions.js'
import { featureGateProblems } from '../features.js'
import type { Rule } from './rule.js'

/** How far back emulation may go, in minor releases (upstream: binary minor - 3). */
const EMULATION_WINDOW = 3

interface Versions {
  binary: MajorMinor
  emulated: MajorMinor
}

function versions(values: FlagValues): Versions {
  const binary = serverMajorMinor(values.version)
  return { binary, emulated: values['emulated-version'][KUBE_COMPONENT] ?? binary }
}

const emulationRange: Rule = ({ values }) => {
  const { binary, emulated } = versions(values)
  const problems: string[] = []
  const oldest = minorsBefore(binary, EMULATION_WINDOW)
  if (compareMajorMinor(emulated, binary) > 0 || compareMajorMinor(emulated, oldest) < 0) {
    problems.push(`emulation version ${formatMajorMinor(emulated)} is not between [${formatMajorMinor(oldest)}, ${formatMajorMinor(binary)}]`)
  }
  const minCompatibility = values['min-compatibility-version'][KUBE_COMPONENT]
  const floor = minorsBefore(binary, EMULATION_WINDOW + 1)
  if (minCompatibility && (compareMajorMinor(minCompatibility, emulated) > 0 || compareMajorMinor(minCompatibility, floor) < 0)) {
    problems.push(
      `minCompatibilityVersion version ${formatMajorMinor(minCompatibility)} is not between [${formatMajorMinor(floor)}, ${formatMajorMinor(emulated)}]`,
    )
  }
  return problems
}

const forwardCompatible: Rule = ({ values }) => {
  const { binary, emulated } = versions(values)
  if (compareMajorMinor(emulated, binary) < 0) return []
  return (['emulation-forward-compatible', 'runtime-config-emulation-forward-compatible'] as const)
    .filter((flag) => values[flag])
    .map((flag) => `--${flag} cannot be set to true if the emulation version is the same as the binary version`)
}

const runtimeConfig: Rule = ({ values }) => {
  const config = values['runtime-config']
  const keys = Object.keys(config)
  if (keys.length === 1 && config['api/all'] === 'false') return ['invalid key with only api/all=false']
  const { binary, emulated } = versions(values)
  const problems: string[] = []
  const unknownGroups: string[] = []
  for (const key of keys) {
    const value = config[key] ?? ''
    const enabled = value === '' ? ok(true) : parseBool(value)
    if ('reason' in enabled) {
      problems.push(`invalid value of ${key}: ${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`)
      continue
    }
    if (VERSION_SET_KEYS.has(key)) continue
    const gv = runtimeConfigGroupVersion(key)
    if (!gv) {
      problems.push(`runtime-config invalid key ${key}`)
      continue
    }
    if (!API_GROUPS.has(gv.group)) {
      unknownGroups.push(gv.group)
      continue
    }
    const groupVersion = `${gv.group}/${gv.version}`
    const introduced = introducedInMinor(gv.group, gv.version, gv.resource)
    const emulating = compareMajorMinor(emulated, binary) < 0
    if (enabled.value && emulating && introduced !== undefined && introduced > emulated.minor && !values['runtime-config-emulation-forward-compatible']) {
      problems.push(
        `cannot enable ${gv.resource ? `groupVersionResource ${groupVersion}/${gv.resource}` : `groupVersion ${groupVersion}`} in runtime-config because it is introduced at ${emulated.major}.${introduced} after the current version ${formatMajorMinor(emulated)}. Consider setting --runtime-config-emulation-forward-compatible=true`,
      )
    }
  }
  if (unknownGroups.length) problems.push(`unknown api groups ${unknownGroups.join(',')}`)
  return problems
}

/** Only the minor release before the server's is meaningful. */
const showHiddenMetrics: Rule = ({ values }) => {
  const wanted = values['show-hidden-metrics-for-version']
  if (wanted === '') return []
  const { binary } = versions(values)
  const previous = `${binary.major}.${binary.minor - 1}`
  return wanted === previous
    ? []
    : [`--show-hidden-metrics-for-version must be omitted or have the value '${previous}'. Only the previous minor version is allowed`]
}

const featureGatePrefixes: Rule = ({ values }) => {
  const gates = values['feature-gates']
  return gates[''] && gates[KUBE_COMPONENT]
    ? ['set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use']
    : []
}

const lockedAndMissingGates: Rule = ({ values }) => featureGateProblems(values)

export const VERSION_RULES: readonly Rule[] = [emulationRange, forwardCompatible, runtimeConfig, showHiddenMetrics, featureGatePrefixes, lockedAndMissingGates]
