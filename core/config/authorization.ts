/**
 * The AuthorizationConfiguration file (`--authorization-config`; spec:
 * "AuthorizationConfiguration", "AuthorizerConfiguration",
 * "WebhookConfiguration" and below): the ordered authorizer chain,
 * validated as upstream's ValidateAuthorizationConfiguration and
 * kube-apiserver's loader do, with every webhook match condition compiled
 * against `request` at load time.
 */
import { z } from 'zod'
import { type CelProgram, compile } from '../cel/compile.js'
import { formatGoDuration } from '../machinery/duration.js'
import {
  type FieldError,
  FieldPath,
  duplicate,
  forbiddenField,
  invalid,
  notSupported,
  required,
  tooMany,
} from '../machinery/field.js'
import { isDNS1123Subdomain } from '../machinery/names.js'
import { CONFIG_GROUP, type ConfigKind, decodeConfig } from './decode.js'
import { goDurationField, goList, goPointer, goString, goStruct } from './fields.js'
import { isAbsolutePath } from './file-path.js'
import { appendAll } from '../machinery/append-all.js'

/** kube-apiserver's authorizer types (its --authorization-mode choices), sorted as upstream lists them. */
export const AUTHORIZER_TYPES = ['ABAC', 'AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook'] as const
/** Only webhooks may appear more than once. */
const REPEATABLE_TYPES = new Set(['Webhook'])

const MAX_MATCH_CONDITIONS = 64
const MAX_TIMEOUT_MS = 30_000
/** Defaults upstream applies when the file is decoded (SetDefaults_WebhookConfiguration). */
const DEFAULT_AUTHORIZED_TTL_MS = 5 * 60_000
const DEFAULT_UNAUTHORIZED_TTL_MS = 30_000

const webhookConfiguration = z.lazy(() => goStruct({
  authorizedTTL: goDurationField,
  cacheAuthorizedRequests: goPointer(z.boolean()),
  unauthorizedTTL: goDurationField,
  cacheUnauthorizedRequests: goPointer(z.boolean()),
  timeout: goDurationField,
  subjectAccessReviewVersion: goString,
  matchConditionSubjectAccessReviewVersion: goString,
  failurePolicy: goString,
  connectionInfo: goStruct({
    type: goString,
    // The spec's name; upstream's `kubeConfigFile` is read too (docs/architecture.md).
    platformConfigFile: goPointer(z.string()),
    kubeConfigFile: goPointer(z.string()),
  }),
  matchConditions: goList(goStruct({ expression: goString })),
}).transform((w) => ({
  ...w,
  authorizedTTL: w.authorizedTTL || DEFAULT_AUTHORIZED_TTL_MS,
  unauthorizedTTL: w.unauthorizedTTL || DEFAULT_UNAUTHORIZED_TTL_MS,
  cacheAuthorizedRequests: w.cacheAuthorizedRequests ?? true,
  cacheUnauthorizedRequests: w.cacheUnauthorizedRequests ?? true,
})))

const schema = z.lazy(() => z.strictObject({
  authorizers: goList(goStruct({ type: goString, name: goString, webhook: goPointer(webhookConfiguration) })),
}))

export type AuthorizationConfiguration = z.output<typeof schema>
export type AuthorizerConfiguration = AuthorizationConfiguration['authorizers'][number]
/** Durations are milliseconds. */
export type WebhookConfiguration = NonNullable<AuthorizerConfiguration['webhook']>

/** The loaded file: each authorizer carries its compiled match conditions (none for other types). */
export interface LoadedAuthorizationConfiguration {
  authorizers: (AuthorizerConfiguration & { matchConditionPrograms: CelProgram[] })[]
}

export interface AuthorizationLoadOptions {
  /**
   * Why the webhook's connection-config file cannot be used (e.g.
   * `error loading file: ...`, `must be a regular file`), or undefined when
   * it can. Core reads no files; the runtime supplies this check.
   */
  checkConnectionFile?: (path: string) => string | undefined
}

const goDurationText = (ms: number) => formatGoDuration(Math.round(ms * 1e6))

type Check = { errors: FieldError[]; programs: CelProgram[] }

function checkTimes(w: WebhookConfiguration, path: FieldPath, errs: FieldError[]): void {
  if (w.timeout === 0) errs.push(required(path.child('timeout')))
  else if (w.timeout < 0 || w.timeout > MAX_TIMEOUT_MS) {
    errs.push(invalid(path.child('timeout'), goDurationText(w.timeout), 'must be > 0s and <= 30s'))
  }
  for (const ttl of ['authorizedTTL', 'unauthorizedTTL'] as const) {
    if (w[ttl] < 0) errs.push(invalid(path.child(ttl), goDurationText(w[ttl]), 'must be > 0s'))
  }
}

function checkVersions(w: WebhookConfiguration, path: FieldPath, errs: FieldError[]): void {
  const sar = w.subjectAccessReviewVersion
  if (!sar) errs.push(required(path.child('subjectAccessReviewVersion')))
  else if (sar !== 'v1' && sar !== 'v1beta1') errs.push(notSupported(path.child('subjectAccessReviewVersion'), sar, ['v1', 'v1beta1']))

  const mc = w.matchConditionSubjectAccessReviewVersion
  const mcPath = path.child('matchConditionSubjectAccessReviewVersion')
  if (!mc) {
    if (w.matchConditions.length) errs.push(required(mcPath, 'required if match conditions are specified'))
  } else if (mc !== 'v1') errs.push(notSupported(mcPath, mc, ['v1']))

  const fp = w.failurePolicy
  if (!fp) errs.push(required(path.child('failurePolicy')))
  else if (fp !== 'NoOpinion' && fp !== 'Deny') errs.push(notSupported(path.child('failurePolicy'), fp, ['NoOpinion', 'Deny']))
}

function checkConnectionInfo(w: WebhookConfiguration, path: FieldPath, errs: FieldError[], options: AuthorizationLoadOptions): void {
  const info = w.connectionInfo
  const infoPath = path.child('connectionInfo')
  const { platformConfigFile, kubeConfigFile } = info
  if (platformConfigFile !== undefined && kubeConfigFile !== undefined) {
    errs.push(forbiddenField(infoPath.child('kubeConfigFile'), 'may not be set together with platformConfigFile (the same field)'))
  }
  const fileField = kubeConfigFile !== undefined && platformConfigFile === undefined ? 'kubeConfigFile' : 'platformConfigFile'
  const file = platformConfigFile ?? kubeConfigFile
  const filePath = infoPath.child(fileField)
  switch (info.type) {
    case '':
      errs.push(required(infoPath.child('type')))
      break
    case 'InClusterConfig':
      if (file !== undefined) errs.push(invalid(filePath, file, 'can only be set when type=KubeConfigFile'))
      break
    case 'KubeConfigFile': {
      if (!file) errs.push(required(filePath))
      else if (!isAbsolutePath(file)) errs.push(invalid(filePath, file, 'must be an absolute path'))
      else {
        const problem = options.checkConnectionFile?.(file)
        if (problem) errs.push(invalid(filePath, file, problem))
      }
      break
    }
    default:
      errs.push(notSupported(infoPath.child('type'), info.type, ['InClusterConfig', 'KubeConfigFile']))
  }
}

function checkMatchConditions(w: WebhookConfiguration, path: FieldPath, result: Check): void {
  const listPath = path.child('matchConditions')
  if (w.matchConditions.length > MAX_MATCH_CONDITIONS) {
    result.errors.push(tooMany(listPath, w.matchConditions.length, MAX_MATCH_CONDITIONS))
    return
  }
  const seen = new Set<string>()
  w.matchConditions.forEach(({ expression }, i) => {
    const p = listPath.index(i).child('expression')
    if (!expression.trim()) return void result.errors.push(required(p))
    if (seen.has(expression)) return void result.errors.push(duplicate(p, expression))
    seen.add(expression)
    const compiled = compile('request', expression, ['bool'])
    if ('program' in compiled) result.programs.push(compiled.program)
    else result.errors.push(invalid(p, expression, compiled.got ? `${compiled.reason} but got ${compiled.got}` : compiled.reason))
  })
}

function checkWebhook(w: WebhookConfiguration, path: FieldPath, options: AuthorizationLoadOptions): Check {
  const result: Check = { errors: [], programs: [] }
  checkTimes(w, path, result.errors)
  checkVersions(w, path, result.errors)
  checkConnectionInfo(w, path, result.errors, options)
  checkMatchConditions(w, path, result)
  return result
}

/** Every problem of the file, and each authorizer's compiled match conditions. */
function checkAuthorization(c: AuthorizationConfiguration, options: AuthorizationLoadOptions): { errors: FieldError[]; programs: CelProgram[][] } {
  const root = FieldPath.root('authorizers')
  const errors: FieldError[] = []
  const programs: CelProgram[][] = c.authorizers.map(() => [])
  if (c.authorizers.length === 0) errors.push(required(root, 'at least one authorization mode must be defined'))
  const seenTypes = new Set<string>()
  const seenNames = new Set<string>()
  c.authorizers.forEach((a, i) => {
    const path = root.index(i)
    if (!a.type) return void errors.push(required(path.child('type')))
    if (!(AUTHORIZER_TYPES as readonly string[]).includes(a.type)) {
      return void errors.push(notSupported(path.child('type'), a.type, AUTHORIZER_TYPES))
    }
    if (seenTypes.has(a.type) && !REPEATABLE_TYPES.has(a.type)) return void errors.push(duplicate(path.child('type'), a.type))
    seenTypes.add(a.type)

    const namePath = path.child('name')
    const nameErrors = a.name ? isDNS1123Subdomain(a.name) : []
    if (!a.name) errors.push(required(namePath))
    else if (seenNames.has(a.name)) errors.push(duplicate(namePath, a.name))
    else if (nameErrors.length) errors.push(invalid(namePath, a.name, `authorizer name is invalid: ${nameErrors.join(', ')}`))
    else if (a.type !== 'Webhook' && a.name !== a.type.toLowerCase()) {
      // kube-apiserver names its built-in authorizers after their type (metrics and reload rely on it).
      errors.push(invalid(namePath, a.name, `expected name ${a.type.toLowerCase()} for authorizer ${a.type}`))
    }
    seenNames.add(a.name)

    const webhookPath = path.child('webhook')
    if (a.type !== 'Webhook') {
      if (a.webhook) errors.push(invalid(webhookPath, 'non-null', 'may only be specified when type=Webhook'))
      return
    }
    if (!a.webhook) return void errors.push(required(webhookPath, 'required when type=Webhook'))
    const checked = checkWebhook(a.webhook, webhookPath, options)
    appendAll(errors, checked.errors)
    programs[i] = checked.programs
  })
  return { errors, programs }
}

const API_VERSIONS = ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${CONFIG_GROUP}/${v}`)

/** The kind for decodeConfig (no connection-file check); use loadAuthorizationConfiguration to keep the programs. */
export const AuthorizationConfigurationKind: ConfigKind<AuthorizationConfiguration> = {
  kind: 'AuthorizationConfiguration',
  apiVersions: API_VERSIONS,
  schema,
  validate: (c) => checkAuthorization(c, {}).errors,
}

/**
 * Reads an AuthorizationConfiguration (YAML or JSON) and compiles its match
 * conditions. Throws ConfigFileError listing every problem of the file; the
 * server must not start then.
 */
export function loadAuthorizationConfiguration(
  text: string,
  source: string,
  options: AuthorizationLoadOptions = {},
): LoadedAuthorizationConfiguration {
  let programs: CelProgram[][] = []
  const config = decodeConfig(text, source, {
    ...AuthorizationConfigurationKind,
    validate: (c) => {
      const checked = checkAuthorization(c, options)
      programs = checked.programs
      return checked.errors
    },
  })
  return { authorizers: config.authorizers.map((a, i) => ({ ...a, matchConditionPrograms: programs[i] ?? [] })) }
}
