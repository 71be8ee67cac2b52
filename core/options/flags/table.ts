/**
 * The whole command line as data: every flag of the spec plus the
 * project's own `--data-dir`. `FlagValues` gives each flag's value its type.
 */
import type { KindValue } from './kinds.js'
import type { FlagSpec, Section } from './spec.js'
import { ADMISSION_FLAGS } from './table/admission.js'
import { AUDITING_FLAGS } from './table/auditing.js'
import { AUTHENTICATION_FLAGS } from './table/authentication.js'
import { AUTHORIZATION_FLAGS } from './table/authorization.js'
import { GENERIC_FLAGS } from './table/generic.js'
import { MISC_FLAGS } from './table/misc.js'
import { OBSERVABILITY_FLAGS } from './table/observability.js'
import { PERSISTENCE_FLAGS } from './table/persistence.js'
import { SECURE_SERVING_FLAGS } from './table/secure-serving.js'

export const FLAGS = [
  ...GENERIC_FLAGS,
  ...PERSISTENCE_FLAGS,
  ...SECURE_SERVING_FLAGS,
  ...AUDITING_FLAGS,
  ...AUTHENTICATION_FLAGS,
  ...AUTHORIZATION_FLAGS,
  ...ADMISSION_FLAGS,
  ...OBSERVABILITY_FLAGS,
  ...MISC_FLAGS,
] as const

type TableEntry = (typeof FLAGS)[number]

/** A flag's canonical name (the spec's spelling), without `--`. */
export type FlagName = TableEntry['name']

/** Every flag's value, typed by its kind, defaults filled in. */
export type FlagValues = { [F in TableEntry as F['name']]: KindValue<F['kind']> }

const BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]))

export function flagSpec(name: FlagName): FlagSpec {
  const spec = BY_NAME.get(name)
  if (!spec) throw new Error(`no flag --${name}`)
  return spec
}

/** Every flag with its typed default, fresh copies so that a caller may change them. */
export function defaultValues(): FlagValues {
  return Object.fromEntries(FLAGS.map((f) => [f.name, structuredClone(f.default)])) as FlagValues
}

/** A section's flags sorted by name, byte-wise, as pflag lists them. */
export function sectionFlags(section: Section): FlagSpec[] {
  return FLAGS.filter((f) => f.section === section).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
