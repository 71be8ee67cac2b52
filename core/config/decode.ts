/**
 * Decoding of the versioned config files (spec: "Top-level file kinds";
 * docs/architecture.md). Every kind goes through the same steps, so every
 * kind reports problems the same way:
 *
 * 1. the text is read as YAML (JSON is YAML) into one document;
 * 2. `apiVersion` and `kind` select the kind; older apiVersions that
 *    upstream still reads are accepted;
 * 3. a zod schema checks the structure: unknown fields, wrong types and
 *    missing required fields become field errors with their path;
 * 4. the kind's semantic rules run on the typed value.
 *
 * All problems of a file are collected and thrown together, so the user
 * fixes a file in one go, and the server does not start.
 */
import { LineCounter, parseDocument } from 'yaml'
import type { z } from 'zod'
import { type FieldError, errorText, FieldPath, invalid, notSupported, required } from '../machinery/field.js'
import { formatValue } from '../machinery/go-format.js'

/** The spec's `apiserver.config.<platform-domain>` on the wire. */
export const CONFIG_GROUP = 'apiserver.config.k8s.io'

export interface ConfigKind<T> {
  kind: string
  /** Every `apiVersion` read for this kind, the current one first. */
  apiVersions: readonly string[]
  /** The structure of the document without `apiVersion` and `kind`; unknown fields must be refused (strict objects). */
  schema: z.ZodType<T>
  /** Rules the schema cannot state (exclusivity, uniqueness, CEL compilation, ...). Paths start at the document root. */
  validate?: (config: T) => FieldError[]
  /** Whether a field may hold key material: a value there that fails the schema is reported as `REDACTED`, never shown. */
  secret?: (path: readonly PropertyKey[]) => boolean
}

/** One problem of a file: a field error, or a line that is not about one field (unknown field, syntax). */
export type ConfigProblem = FieldError | string

export function problemText(p: ConfigProblem): string {
  return typeof p === 'string' ? p : errorText(p)
}

/** A file that cannot be used; `message` lists every problem, one per line. */
export class ConfigFileError extends Error {
  constructor(
    readonly source: string,
    readonly kind: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(`${source}: invalid ${kind}:\n${problems.map((p) => `  ${problemText(p)}`).join('\n')}`)
    this.name = 'ConfigFileError'
  }
}

/** Reads YAML or JSON text into a plain value; a syntax error names the line. */
export function parseConfigText(text: string, source: string, kind: string): unknown {
  const lines = new LineCounter()
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter: lines })
  if (doc.errors.length) {
    throw new ConfigFileError(
      source,
      kind,
      doc.errors.map((e) => `cannot parse as YAML or JSON (line ${lines.linePos(e.pos[0]).line}): ${e.message.split('\n')[0]}`),
    )
  }
  return doc.toJS({ maxAliasCount: 100 }) as unknown
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `['jwt', 0, 'issuer', 'url']` -> `jwt[0].issuer.url`. */
export function zodPath(path: readonly PropertyKey[], base = FieldPath.root('')): FieldPath {
  let p = base
  for (const part of path) p = typeof part === 'number' ? p.index(part) : p.child(String(part))
  return p
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  array: 'a list',
  object: 'an object',
  record: 'an object',
}

/** Turns zod's issues into upstream-worded problems; `secret` tells the fields whose values are never shown. */
export function zodProblems(issues: readonly z.core.$ZodIssue[], base = FieldPath.root(''), secret?: ConfigKind<unknown>['secret']): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  for (const issue of issues) {
    const path = zodPath(issue.path, base)
    const given = (issue as { input?: unknown }).input
    const input = given !== undefined && secret?.(issue.path) ? 'REDACTED' : given
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) problems.push(`unknown field ${JSON.stringify(String(path.child(key)))}`)
        break
      case 'invalid_type':
        problems.push(
          input === undefined
            ? required(path)
            : invalid(path, input, `must be ${TYPE_WORDS[issue.expected] ?? issue.expected}`),
        )
        break
      case 'invalid_value':
        problems.push(notSupported(path, input, issue.values.map((v) => String(v))))
        break
      case 'invalid_union':
        problems.push(invalid(path, input, issue.message))
        break
      default:
        problems.push(input === undefined ? `${String(path)}: ${issue.message}` : invalid(path, input, issue.message))
    }
  }
  return problems
}

/**
 * Decodes one config file of the given kind. Throws ConfigFileError with
 * every problem found; returns the typed configuration otherwise.
 */
export function decodeConfig<T>(text: string, source: string, kind: ConfigKind<T>): T {
  return decodeConfigDocument(parseConfigText(text, source, kind.kind), source, kind)
}

/** The same for a document already parsed (an admission plugin's inline `configuration`). */
export function decodeConfigDocument<T>(doc: unknown, source: string, kind: ConfigKind<T>): T {
  if (!isRecord(doc)) throw new ConfigFileError(source, kind.kind, [`the file must hold one ${kind.kind} object, got ${formatValue(doc)}`])
  const { apiVersion, kind: docKind, ...body } = doc
  const header: ConfigProblem[] = []
  if (docKind !== kind.kind) header.push(`kind: Invalid value: ${formatValue(docKind)}: must be ${JSON.stringify(kind.kind)}`)
  if (typeof apiVersion !== 'string' || !kind.apiVersions.includes(apiVersion)) {
    header.push(notSupported(FieldPath.root('apiVersion'), apiVersion ?? '', kind.apiVersions))
  }
  if (header.length) throw new ConfigFileError(source, kind.kind, header)

  const parsed = kind.schema.safeParse(body, { reportInput: true })
  if (!parsed.success) throw new ConfigFileError(source, kind.kind, zodProblems(parsed.error.issues, undefined, kind.secret))
  const semantic = kind.validate?.(parsed.data) ?? []
  if (semantic.length) throw new ConfigFileError(source, kind.kind, semantic)
  return parsed.data
}
