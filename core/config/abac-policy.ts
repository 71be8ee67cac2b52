/**
 * The ABAC policy file of `--authorization-policy-file`: one JSON object per
 * line, each one rule (spec: Authorization flags). Read as upstream's
 * abac.NewFromFile reads it:
 *
 * - blank lines and lines starting with `#` (after spaces) are skipped;
 * - `{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {...}}`
 *   is the current form;
 * - a line without `apiVersion` is the older unversioned (v0) form, with the
 *   fields at the top level, and is converted as upstream converts it;
 * - unknown fields are ignored, as upstream's decoder ignores them, but
 *   reported as warnings, since a misspelt field widens a rule silently.
 *
 * Unlike upstream, which stops at the first bad line, every bad line is
 * reported at once.
 */
import { parse } from 'yaml'
import { z } from 'zod'
import { ConfigFileError, type ConfigProblem, problemText, zodProblems } from './decode.js'
import { goBool, goString } from './fields.js'

const GROUP = 'abac.authorization.kubernetes.io'
const KIND = 'ABAC policy file'

/** Every authenticated user: what `*` and the v0 defaults stand for. */
const ALL_AUTHENTICATED = 'system:authenticated'

/** Go's bufio.Scanner refuses longer lines. */
const MAX_LINE_BYTES = 64 * 1024 - 1

export interface AbacPolicy {
  /** Where the rule is in the file, for messages. */
  line: number
  /** `*` matches everyone; an empty user and group matches no one. */
  user: string
  group: string
  /** True: only read-only requests (get, list, watch) match. */
  readonly: boolean
  apiGroup: string
  resource: string
  /** `*` matches every namespace and cluster-scoped requests. */
  namespace: string
  /** `*` matches every path; `/foo/*` every path under `/foo/`. */
  nonResourcePath: string
}

export interface AbacPolicyWarning {
  line: number
  message: string
}

const specFields = {
  user: goString,
  group: goString,
  readonly: goBool,
  apiGroup: goString,
  resource: goString,
  namespace: goString,
  nonResourcePath: goString,
}

const v1beta1Schema = z.lazy(() => z.object({ apiVersion: z.string(), kind: z.string(), spec: z.preprocess((v) => v ?? {}, z.object(specFields)) }))

const v0Fields = { user: goString, group: goString, readonly: goBool, resource: goString, namespace: goString }
const v0Schema = z.lazy(() => z.object({ apiVersion: goString, kind: goString, ...v0Fields }))

type Spec = Omit<AbacPolicy, 'line'>

// Upstream's v1beta1 conversion: a `*` subject means every authenticated user.
function fromV1beta1(spec: Spec): Spec {
  return spec.user === '*' || spec.group === '*' ? { ...spec, user: '', group: ALL_AUTHENTICATED } : spec
}

// Upstream's v0 conversion: empty fields meant "everything", and every rule spans all API groups.
function fromV0(p: z.infer<typeof v0Schema>): Spec {
  const everyone = (p.user === '' && p.group === '') || p.user === '*' || p.group === '*'
  return {
    user: everyone ? '' : p.user,
    group: everyone ? ALL_AUTHENTICATED : p.group,
    readonly: p.readonly,
    apiGroup: '*',
    resource: p.resource || '*',
    namespace: p.namespace || '*',
    nonResourcePath: p.namespace === '' && p.resource === '' ? '*' : '',
  }
}

function unknownFields(object: Record<string, unknown>, known: readonly string[], prefix = ''): string[] {
  return Object.keys(object)
    .filter((key) => !known.includes(key))
    .map((key) => `${prefix}${key}`)
}

type LineResult = { spec: Spec; unversioned: boolean; unknown: string[] } | { problem: string }

function readLine(text: string): LineResult {
  let doc: unknown
  try {
    doc = parse(text, { prettyErrors: false })
  } catch (err) {
    return { problem: `cannot parse as JSON: ${(err as Error).message.split('\n')[0]}` }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { problem: 'must be one JSON object' }
  const object = doc as Record<string, unknown>
  const { apiVersion, kind } = object
  const fail = (issues: readonly z.core.$ZodIssue[]): LineResult => ({ problem: zodProblems(issues).map(problemText).join('; ') })

  if (apiVersion === `${GROUP}/v1beta1` && kind === 'Policy') {
    const parsed = v1beta1Schema.safeParse(object, { reportInput: true })
    if (!parsed.success) return fail(parsed.error.issues)
    const spec = typeof object.spec === 'object' && object.spec !== null ? (object.spec as Record<string, unknown>) : {}
    return {
      spec: fromV1beta1(parsed.data.spec),
      unversioned: false,
      unknown: [...unknownFields(object, ['apiVersion', 'kind', 'spec']), ...unknownFields(spec, Object.keys(specFields), 'spec.')],
    }
  }
  const v0 = apiVersion === `${GROUP}/v0` && kind === 'Policy'
  const unversioned = apiVersion === undefined && (kind === undefined || kind === 'Policy')
  if (!v0 && !unversioned) {
    return { problem: `apiVersion and kind must be "${GROUP}/v1beta1" and "Policy", or both left out for the unversioned form` }
  }
  const parsed = v0Schema.safeParse(object, { reportInput: true })
  if (!parsed.success) return fail(parsed.error.issues)
  return { spec: fromV0(parsed.data), unversioned, unknown: unknownFields(object, ['apiVersion', 'kind', ...Object.keys(v0Fields)]) }
}

/**
 * Reads the text of an ABAC policy file. Throws ConfigFileError naming the
 * line and the reason of every bad line (`line 3: <the line>: <reason>`);
 * returns the rules in file order otherwise. Warnings (unknown fields,
 * unversioned rules) go to `onWarning`.
 */
export function loadAbacPolicy(text: string, source: string, onWarning: (warning: AbacPolicyWarning) => void = () => {}): AbacPolicy[] {
  const policies: AbacPolicy[] = []
  const problems: ConfigProblem[] = []
  let firstUnversioned: number | undefined
  const encoder = new TextEncoder()
  text.split('\n').forEach((raw, i) => {
    const line = i + 1
    const content = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    const trimmed = content.trim()
    if (trimmed === '' || trimmed.startsWith('#')) return
    if (encoder.encode(content).length > MAX_LINE_BYTES) {
      problems.push(`line ${line}: longer than ${MAX_LINE_BYTES} bytes (bufio.Scanner: token too long)`)
      return
    }
    const result = readLine(content)
    if ('problem' in result) {
      problems.push(`line ${line}: ${content}: ${result.problem}`)
      return
    }
    for (const field of result.unknown) onWarning({ line, message: `unknown field "${field}" ignored` })
    if (result.unversioned) firstUnversioned ??= line
    policies.push({ line, ...result.spec })
  })
  if (problems.length) throw new ConfigFileError(source, KIND, problems)
  if (firstUnversioned !== undefined) {
    onWarning({ line: firstUnversioned, message: `the file contains unversioned rules; write them as {"apiVersion": "${GROUP}/v1beta1", "kind": "Policy", "spec": {...}}` })
  }
  return policies
}
