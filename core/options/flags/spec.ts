/**
 * The shape of one entry of the flag table (docs/architecture.md): the
 * parser, `--help`, the rules, the start-up warnings and docs/flags.md all
 * read these fields, so a flag is described once.
 */
import { KINDS, type KindName, type KindValue } from './kinds.js'

/** The help sections, in `--help` order; upstream's names, with "Etcd" spelled "Persistence". */
export const SECTIONS = [
  'Generic',
  'Persistence',
  'Secure serving',
  'Auditing',
  'Features',
  'Authentication',
  'Authorization',
  'API enablement',
  'Egress selector',
  'Admission',
  'Metrics',
  'Logs',
  'Traces',
  'Misc',
  'Global',
] as const

export type Section = (typeof SECTIONS)[number]

/**
 * `active`: the server acts on the flag today. `pending`: the flag is
 * accepted and checked, but not yet in effect (`pending` names why).
 * `refused`: a security setting the server does not enforce yet; giving it
 * stops start-up (`pending` names why), because a control plane that
 * ignored it would look closed while it is open.
 */
export type Status = 'active' | 'pending' | 'refused'

export interface FlagSpec<N extends string = string, K extends KindName = KindName> {
  /** The spec's spelling, without `--`. */
  name: N
  /** Upstream spellings accepted as well (`etcd-servers` for `kvstore-servers`). */
  aliases?: readonly string[]
  /** One letter: `-h`. */
  short?: string
  kind: K
  /** The typed value when the flag is not given. */
  default: KindValue<K>
  /** What help shows as the default when it differs from the typed default's text (a computed default). */
  defaultText?: string
  section: Section
  /** In the project's words; what the flag means and which value does what. */
  help: string
  status: Status
  /** Why a pending or refused flag is not in effect yet; shown in warnings, errors and docs. */
  pending?: string
  /** Set for a deprecated flag: what to use instead. */
  deprecated?: string
  /** A project flag that the spec does not name. */
  extension?: true
}

/**
 * Declares one flag, keeping its name and kind as literal types so that
 * `FlagValues` (table.ts) knows the type of every flag's value.
 */
export function flag<const N extends string, const K extends KindName>(spec: FlagSpec<N, K>): FlagSpec<N, K> {
  if (!(spec.kind in KINDS)) throw new Error(`flag --${spec.name}: unknown kind ${spec.kind}`)
  return spec
}
