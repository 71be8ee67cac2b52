/**
 * The feature gates this server implements, each with upstream's stages
 * per release (its versioned feature specs), so that a gate's default
 * follows `--emulated-version` as upstream's does. Any other name given to
 * `--feature-gates` stops start-up, as upstream refuses a gate it does not
 * know: a gate this server does not implement would otherwise be accepted
 * and switch nothing (docs/flags.md lists what each gate below changes).
 */
import type { FlagValues } from './table.js'
import { compareMajorMinor, KUBE_COMPONENT, type MajorMinor, serverMajorMinor } from './versions.js'

type Stage = 'alpha' | 'beta' | 'ga' | 'deprecated'

interface GateStage {
  /** The minor release of Kubernetes 1.x this stage starts at. */
  since: number
  default: boolean
  stage: Stage
  /** Set against its default, the gate is refused (upstream's LockToDefault). */
  locked?: true
}

interface Gate {
  /** Oldest first. */
  stages: readonly GateStage[]
  /** What switching it changes here. */
  effect: string
}

export const FEATURE_GATES = {
  APIResponseCompression: {
    stages: [
      { since: 8, default: false, stage: 'alpha' },
      { since: 16, default: true, stage: 'beta' },
    ],
    effect: 'API answers over 128 KiB (objects, lists, Status, discovery) are sent gzip-compressed to clients whose Accept-Encoding names gzip',
  },
  APIServerIdentity: {
    stages: [
      { since: 20, default: false, stage: 'alpha' },
      { since: 26, default: true, stage: 'beta' },
    ],
    effect: 'each server publishes its identity lease in kube-system and collects expired ones',
  },
  CoordinatedLeaderElection: {
    stages: [
      { since: 31, default: false, stage: 'alpha' },
      { since: 33, default: false, stage: 'beta' },
    ],
    effect:
      'the controllers\' lease goes to the server of the oldest (emulated, then binary) version: each server publishes a LeaseCandidate, an elected coordinator writes the lease; needs --runtime-config=coordination.k8s.io/v1alpha2=true',
  },
  ExternalServiceAccountTokenSigner: {
    stages: [{ since: 32, default: false, stage: 'alpha' }],
    effect: 'allows --service-account-signing-endpoint',
  },
  KMSv1: {
    stages: [
      { since: 28, default: true, stage: 'deprecated' },
      { since: 29, default: false, stage: 'deprecated' },
    ],
    effect: 'allows kms providers of apiVersion v1 in --encryption-provider-config',
  },
  LoggingAlphaOptions: { stages: [{ since: 24, default: false, stage: 'alpha' }], effect: 'allows the alpha logging flags' },
  LoggingBetaOptions: { stages: [{ since: 24, default: true, stage: 'beta' }], effect: 'allows the beta logging flags' },
  MutatingAdmissionPolicy: {
    stages: [{ since: 30, default: false, stage: 'alpha' }],
    effect: 'the MutatingAdmissionPolicy admission plugin applies MutatingAdmissionPolicies; off, it is inert',
  },
  RemoteRequestHeaderUID: { stages: [{ since: 32, default: false, stage: 'alpha' }], effect: 'allows --requestheader-uid-headers' },
  ServiceAccountNodeAudienceRestriction: {
    stages: [
      { since: 32, default: false, stage: 'beta' },
      { since: 33, default: true, stage: 'beta' },
    ],
    effect: "NodeRestriction lets a kubelet request a token only for an audience its pod's volumes use or the authorizer grants it (verb request-serviceaccounts-token-audience)",
  },
  StructuredAuthenticationConfiguration: {
    stages: [
      { since: 29, default: false, stage: 'alpha' },
      { since: 30, default: true, stage: 'beta' },
    ],
    effect: 'allows --authentication-config',
  },
  StructuredAuthorizationConfiguration: {
    stages: [
      { since: 29, default: false, stage: 'alpha' },
      { since: 30, default: true, stage: 'beta' },
      { since: 32, default: true, stage: 'ga', locked: true },
    ],
    effect: 'allows --authorization-config',
  },
  UnknownVersionInteroperabilityProxy: {
    stages: [{ since: 28, default: false, stage: 'alpha' }],
    effect: 'the peer proxy: a request for a resource this server does not serve goes to a live peer that does (needs the proxy client certificate); allows the --peer-* flags',
  },
} as const satisfies Record<string, Gate>

export type FeatureGate = keyof typeof FEATURE_GATES

type GateValues = Pick<FlagValues, 'feature-gates' | 'emulated-version' | 'version'>

/** The release whose gate defaults apply: the emulated one, else the server's own. */
export function effectiveVersion(values: Pick<FlagValues, 'emulated-version' | 'version'>): MajorMinor {
  return values['emulated-version'][KUBE_COMPONENT] ?? serverMajorMinor(values.version)
}

/** A gate's stage at `at`; undefined before it was introduced. */
export function gateStage(gate: FeatureGate, at: MajorMinor): GateStage | undefined {
  const stages: readonly GateStage[] = FEATURE_GATES[gate].stages
  return [...stages].reverse().find((s) => compareMajorMinor({ major: 1, minor: s.since }, at) <= 0)
}

function given(values: Pick<FlagValues, 'feature-gates'>, name: string): boolean | undefined {
  const gates = values['feature-gates']
  return gates[KUBE_COMPONENT]?.[name] ?? gates['']?.[name]
}

/** A gate's setting: given on the command line, else switched by AllAlpha/AllBeta, else its default at the effective version. */
export function featureEnabled(values: GateValues, gate: FeatureGate): boolean {
  const stage = gateStage(gate, effectiveVersion(values))
  if (!stage) return false
  if (stage.locked) return stage.default
  const all = stage.stage === 'alpha' ? given(values, 'AllAlpha') : stage.stage === 'beta' ? given(values, 'AllBeta') : undefined
  return given(values, gate) ?? all ?? stage.default
}

/** The two switches that set every alpha, or every beta, gate not named. */
const ALL_STAGE_GATES: ReadonlySet<string> = new Set(['AllAlpha', 'AllBeta'])

function isKnownGate(name: string): name is FeatureGate {
  return Object.hasOwn(FEATURE_GATES, name)
}

/**
 * Upstream's refusals: a gate it does not know (only the first, as upstream
 * stops there), a locked gate set against its value, a gate set at a
 * version before it existed.
 */
export function featureGateProblems(values: GateValues): string[] {
  const unknown = Object.values(values['feature-gates'])
    .flatMap((settings) => Object.keys(settings))
    .find((name) => !ALL_STAGE_GATES.has(name) && !isKnownGate(name))
  if (unknown !== undefined) return [`unrecognized feature gate: ${unknown}`]
  const at = effectiveVersion(values)
  const problems: string[] = []
  for (const gate of Object.keys(FEATURE_GATES) as FeatureGate[]) {
    const setting = given(values, gate)
    if (setting === undefined) continue
    const stage = gateStage(gate, at)
    if (!stage) problems.push(`feature gate ${gate} does not exist at the emulation version ${at.major}.${at.minor}: it was introduced in 1.${FEATURE_GATES[gate].stages[0].since}`)
    else if (stage.locked && setting !== stage.default) problems.push(`cannot set feature gate ${gate} to ${setting}, feature is locked to ${stage.default}`)
  }
  return problems
}

/** Upstream's warnings for a gate set on the command line that is GA or deprecated at the effective version. */
export function featureGateWarnings(values: GateValues): string[] {
  const at = effectiveVersion(values)
  const warnings: string[] = []
  for (const gate of Object.keys(FEATURE_GATES) as FeatureGate[]) {
    const setting = given(values, gate)
    const stage = setting === undefined ? undefined : gateStage(gate, at)
    if (!stage || (stage.locked && setting !== stage.default)) continue
    if (stage.stage === 'deprecated') warnings.push(`Setting deprecated feature gate ${gate}=${setting}. It will be removed in a future release.`)
    else if (stage.stage === 'ga') warnings.push(`Setting GA feature gate ${gate}=${setting}. It will be removed in a future release.`)
  }
  return warnings
}
