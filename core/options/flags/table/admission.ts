/**
 * Admission flags (spec: "Admission"). Admission runs in two phases:
 * first only mutating plugins, then only validating ones; the order of
 * names on the command line does not matter.
 */
import { ADMISSION_PLUGIN_NAMES, DEFAULT_ENABLED_ADMISSION_PLUGINS } from '../../../config/admission-plugins.js'
import { flag } from '../spec.js'

const section = 'Admission'
const status = 'active'

/** Every plugin name the spec knows, sorted, and the ones on unless disabled: one list, in core/config. */
export const ADMISSION_PLUGINS = ADMISSION_PLUGIN_NAMES
const DEFAULT_ADMISSION_PLUGINS = [...DEFAULT_ENABLED_ADMISSION_PLUGINS]

export const ADMISSION_FLAGS = [
  flag({
    name: 'admission-control',
    kind: 'strings',
    default: [],
    section,
    status,
    deprecated: 'Use --enable-admission-plugins or --disable-admission-plugins instead. Will be removed in a future version.',
    help: 'The complete list of admission plugins to run, comma separated; every other plugin is off. Not together with --enable-admission-plugins or --disable-admission-plugins.',
  }),
  flag({
    name: 'admission-control-config-file',
    kind: 'string',
    default: '',
    section,
    status,
    help: 'File of kind AdmissionConfiguration with the settings of individual plugins.',
  }),
  flag({
    name: 'default-not-ready-toleration-seconds',
    kind: 'int64',
    default: 300,
    section,
    status,
    help: 'tolerationSeconds of the notReady:NoExecute toleration added to every pod that has none.',
  }),
  flag({
    name: 'default-unreachable-toleration-seconds',
    kind: 'int64',
    default: 300,
    section,
    status,
    help: 'tolerationSeconds of the unreachable:NoExecute toleration added to every pod that has none.',
  }),
  flag({
    name: 'disable-admission-plugins',
    kind: 'strings',
    default: [],
    section,
    status,
    help: `Plugins to switch off although they are on by default, comma separated. On by default: ${DEFAULT_ADMISSION_PLUGINS.join(', ')}.`,
  }),
  flag({
    name: 'enable-admission-plugins',
    kind: 'strings',
    default: [],
    section,
    status,
    help: `Plugins to switch on besides the default ones, comma separated. Known plugins: ${ADMISSION_PLUGINS.join(', ')}.`,
  }),
] as const
