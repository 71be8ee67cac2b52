/**
 * The kinds of flag value: for each, how it is read, the type name help
 * shows after the flag (pflag's Type()), and how a default is shown
 * (undefined hides a zero default, as pflag does).
 */
import { formatGoDuration } from '../../machinery/duration.js'
import { formatPortRange, parseCidrList, parseIPAddress, parsePortRange, type PortRange } from './addresses.js'
import type { Cidr } from '../../machinery/ip.js'
import {
  type NamedCertKey,
  parseKeyValue,
  parseKeyValuePairs,
  parseMetricLabels,
  parseNamedCertKey,
  parseRepeatedString,
  parseStringList,
  parseVModule,
  type VModuleItem,
} from './lists.js'
import {
  ok,
  type Parsed,
  parseBool,
  parseDuration,
  parseFloat64,
  parseInt32,
  parseInt64,
  parseLevel,
  parseQuantity,
} from './values.js'
import { type MajorMinor, parseComponentVersions, parseFeatureGates } from './versions.js'

export interface ValueKind<T> {
  /** Shown after the flag name in help: upstream's pflag Type() name; empty for booleans. */
  typeName: string
  /** What `--flag` alone means; such a flag takes a value only after `=` (pflag's NoOptDefVal). */
  implied?: string
  /** Reads one use of the flag; `previous` is the value collected so far when the flag repeats. */
  parse(text: string, previous: T | undefined): Parsed<T>
  /** The default as help shows it, or undefined for a zero value that help leaves out. */
  show(value: T): string | undefined
}

const kind = <T>(k: ValueKind<T>): ValueKind<T> => k
const number = (v: number): string | undefined => (v === 0 ? undefined : String(v))
const list = (v: readonly string[]): string | undefined => (v.length ? `[${v.join(',')}]` : undefined)
const none = (): undefined => undefined

export const KINDS = {
  bool: kind<boolean>({ typeName: '', implied: 'true', parse: parseBool, show: (v) => (v ? 'true' : undefined) }),
  int: kind<number>({ typeName: 'int', parse: parseInt32, show: number }),
  int64: kind<number>({ typeName: 'int', parse: parseInt64, show: number }),
  level: kind<number>({ typeName: 'Level', parse: parseLevel, show: number }),
  float: kind<number>({ typeName: 'float', parse: parseFloat64, show: number }),
  string: kind<string>({ typeName: 'string', parse: (t) => ok(t), show: (v) => (v === '' ? undefined : JSON.stringify(v)) }),
  ip: kind<string>({ typeName: 'ip', parse: parseIPAddress, show: (v) => v || undefined }),
  /** Milliseconds. */
  duration: kind<number>({ typeName: 'duration', parse: parseDuration, show: (v) => (v === 0 ? undefined : formatGoDuration(Math.round(v * 1e6))) }),
  /** Bytes. */
  quantity: kind<number>({ typeName: 'quantity', parse: parseQuantity, show: number }),
  strings: kind<string[]>({ typeName: 'strings', parse: parseStringList, show: list }),
  repeatedStrings: kind<string[]>({ typeName: 'strings', parse: parseRepeatedString, show: list }),
  cidrs: kind<Cidr[]>({ typeName: 'string', parse: parseCidrList, show: (v) => (v.length ? v.map((c) => `${c.network}/${c.prefix}`).join(',') : undefined) }),
  portRange: kind<PortRange | null>({ typeName: 'portRange', parse: parsePortRange, show: (v) => formatPortRange(v) || undefined }),
  keyValuePairs: kind<Record<string, string>>({ typeName: 'mapStringString', parse: parseKeyValuePairs, show: none }),
  keyValue: kind<Record<string, string>>({ typeName: 'mapStringString', parse: parseKeyValue, show: none }),
  // pflag shows an empty stringToString default as `[]`, and so does upstream's help for this flag.
  metricLabels: kind<Record<string, string[]>>({ typeName: 'stringToString', parse: parseMetricLabels, show: (v) => (Object.keys(v).length ? undefined : '[]') }),
  featureGates: kind<Record<string, Record<string, boolean>>>({ typeName: 'colonSeparatedMultimapStringString', parse: parseFeatureGates, show: none }),
  componentVersions: kind<Record<string, MajorMinor>>({ typeName: 'strings', parse: parseComponentVersions, show: none }),
  namedCertKeys: kind<NamedCertKey[]>({ typeName: 'string', parse: parseNamedCertKey, show: none }),
  vmodule: kind<VModuleItem[]>({ typeName: 'pattern=N,...', parse: parseVModule, show: none }),
  /** The version `/version` reports; `--version` alone prints it instead (parse.ts). */
  version: kind<string>({ typeName: 'version[=true]', implied: 'true', parse: (t) => ok(t), show: none }),
} as const

export type KindName = keyof typeof KINDS
export type KindValue<K extends KindName> = (typeof KINDS)[K] extends ValueKind<infer T> ? T : never
