/**
 * Kubernetes' format library (apiserver/pkg/cel/library/format.go, in the
 * environment from 1.31): named string formats whose `validate(s)` gives
 * none when `s` conforms and otherwise the list of reasons, worded as the
 * built-in validation words them.
 *
 *   format.dns1123Label().validate(self)    format.named('uuid').hasValue()
 */
import { type Environment, Optional } from '@marcbachmann/cel-js'
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from '../../machinery/names.js'
import { matchesFormat } from '../../validation/formats.js'
import { parseURL } from './urls.js'

export class NamedFormat {
  constructor(
    readonly name: string,
    readonly check: (value: string) => string[],
  ) {}
}

/** Receiver of `format.<name>()`: the library cannot name a function `format.x`, only a method on a constant. */
class FormatLibrary {}

/** A name that may be completed by a generated suffix: a trailing '-' is allowed (upstream's maskTrailingDash). */
const prefix = (check: (value: string) => string[]) => (value: string) =>
  check(value.length > 1 && value.endsWith('-') ? `${value.slice(0, -1)}a` : value)

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

function uuidErrors(value: string): string[] {
  const plain = value.replace(/^urn:uuid:/i, '').replace(/^\{(.*)\}$/, '$1')
  if (![32, 36].includes(plain.length)) return [`invalid UUID length: ${value.length}`]
  return UUID.test(plain) || /^[0-9a-fA-F]{32}$/.test(plain) ? [] : ['invalid UUID format']
}

const FORMATS: Record<string, (value: string) => string[]> = {
  dns1123Label: isDNS1123Label,
  dns1123Subdomain: isDNS1123Subdomain,
  dns1035Label: isDNS1035Label,
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: prefix(isDNS1123Label),
  dns1123SubdomainPrefix: prefix(isDNS1123Subdomain),
  dns1035LabelPrefix: prefix(isDNS1035Label),
  labelValue: isValidLabelValue,
  uri: (value) => {
    const parsed = parseURL(value)
    return typeof parsed === 'string' ? [parsed] : []
  },
  uuid: uuidErrors,
  byte: (value) => (matchesFormat('byte', value) ? [] : ['invalid base64']),
  date: (value) => (matchesFormat('date', value) ? [] : [`invalid date ${JSON.stringify(value)}`]),
  datetime: (value) => (matchesFormat('datetime', value) ? [] : [`invalid date-time ${JSON.stringify(value)}`]),
}

export function registerFormats(env: Environment): Environment {
  env
    .registerType('kubernetes.NamedFormat', NamedFormat)
    .registerType('FormatLibrary', FormatLibrary)
    .registerConstant('format', 'FormatLibrary', new FormatLibrary())
    .registerFunction('FormatLibrary.named(string): optional<kubernetes.NamedFormat>', (_l: FormatLibrary, name: string) => {
      const check = FORMATS[name]
      return check ? Optional.of(new NamedFormat(name, check)) : Optional.none()
    })
    .registerFunction('kubernetes.NamedFormat.validate(string): optional<list<string>>', (f: NamedFormat, value: string) => {
      const errors = f.check(value)
      return errors.length === 0 ? Optional.none() : Optional.of(errors)
    })
  for (const [name, check] of Object.entries(FORMATS)) {
    env.registerFunction(`FormatLibrary.${name}(): kubernetes.NamedFormat`, () => new NamedFormat(name, check))
  }
  return env
}
