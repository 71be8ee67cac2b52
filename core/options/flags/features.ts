/**
 * The feature gates that flags depend on (spec: "Needs gate ..."), with
 * their defaults as of the project's default version, v1.32. `--feature-gates`
 * accepts other gate names too; they switch nothing yet.
 */
import type { FlagValues } from './table.js'
import { KUBE_COMPONENT } from './versions.js'

interface Gate {
  default: boolean
  stage: 'alpha' | 'beta' | 'ga'
}

export const FEATURE_GATES = {
  ExternalServiceAccountTokenSigner: { default: false, stage: 'alpha' },
  LoggingAlphaOptions: { default: false, stage: 'alpha' },
  LoggingBetaOptions: { default: true, stage: 'beta' },
  MutatingAdmissionPolicy: { default: false, stage: 'alpha' },
  RemoteRequestHeaderUID: { default: false, stage: 'alpha' },
  StructuredAuthenticationConfiguration: { default: true, stage: 'beta' },
  StructuredAuthorizationConfiguration: { default: true, stage: 'ga' },
  UnknownVersionInteroperabilityProxy: { default: false, stage: 'alpha' },
} as const satisfies Record<string, Gate>

export type FeatureGate = keyof typeof FEATURE_GATES

/** A gate's setting: given on the command line, else switched by AllAlpha/AllBeta, else its default. */
export function featureEnabled(values: Pick<FlagValues, 'feature-gates'>, gate: FeatureGate): boolean {
  const given = values['feature-gates']
  const setting = (name: string): boolean | undefined => given[KUBE_COMPONENT]?.[name] ?? given['']?.[name]
  const { default: enabled, stage }: Gate = FEATURE_GATES[gate]
  return setting(gate) ?? (stage === 'alpha' ? setting('AllAlpha') : stage === 'beta' ? setting('AllBeta') : undefined) ?? enabled
}
