/**
 * `spec.conversion` (upstream's validateCustomResourceConversion). A v1 CRD
 * nests the webhook under `conversion.webhook`; upstream validates its
 * internal form, where `webhookClientConfig` and `conversionReviewVersions`
 * sit on `conversion` itself, and those are the paths clients see.
 */
import { forbiddenField, type FieldError, type FieldPath, invalid, notSupported, required } from '../../machinery/field.js'
import { validateWebhookService, validateWebhookURL, validateReviewVersionItems } from '../admissionregistration/client-config.js'
import { isPlainObject } from '../../machinery/object.js'
import { goStringList } from './go-values.js'
import { appendAll } from '../../machinery/append-all.js'

/** The ConversionReview versions this server (and the one before it) can send. */
export const ACCEPTED_CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1']

const STRATEGIES = ['None', 'Webhook']

const record = (value: unknown): Record<string, unknown> => (isPlainObject(value) ? value : {})
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : '')) : [])

/** The internal form's two fields, read from v1's `conversion.webhook`. */
export function webhookOf(conversion: unknown): { clientConfig?: Record<string, unknown>; reviewVersions: string[] } {
  const webhook = record(record(conversion)['webhook'])
  const clientConfig = webhook['clientConfig']
  return { ...(isPlainObject(clientConfig) ? { clientConfig } : {}), reviewVersions: strings(webhook['conversionReviewVersions']) }
}

/** Whether a list names a version this server can send, or is empty (nothing to hold an update to). */
export function hasAcceptedReviewVersionOrEmpty(versions: readonly string[]): boolean {
  return versions.length === 0 || versions.some((v) => ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v))
}

function validateReviewVersions(versions: string[], requireAccepted: boolean, path: FieldPath): FieldError[] {
  if (versions.length === 0) return [required(path)]
  const errs = validateReviewVersionItems(versions, path)
  if (requireAccepted && !versions.some((v) => ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v))) {
    errs.push(invalid(path, goStringList(versions), `must include at least one of ${ACCEPTED_CONVERSION_REVIEW_VERSIONS.join(', ')}`))
  }
  return errs
}

function validateClientConfig(config: Record<string, unknown>, path: FieldPath): FieldError[] {
  const url = config['url']
  const service = config['service']
  const hasUrl = typeof url === 'string'
  const hasService = isPlainObject(service)
  if (hasUrl === hasService) return [required(path, 'exactly one of url or service is required')]
  return hasUrl ? validateWebhookURL(url, path.child('url')) : validateWebhookService(service, path.child('service'))
}

/** `requireAcceptedReviewVersion` is relaxed on updates of CRDs stored with none (upstream does not tighten stored data). */
export function validateConversion(conversion: unknown, requireAcceptedReviewVersion: boolean, path: FieldPath): FieldError[] {
  if (!isPlainObject(conversion)) return []
  const errs: FieldError[] = []
  const strategy = typeof conversion['strategy'] === 'string' ? conversion['strategy'] : ''
  if (!strategy) errs.push(required(path.child('strategy')))
  else if (!STRATEGIES.includes(strategy)) errs.push(notSupported(path.child('strategy'), strategy, STRATEGIES))
  const { clientConfig, reviewVersions } = webhookOf(conversion)
  const configPath = path.child('webhookClientConfig')
  if (strategy === 'Webhook') {
    if (!clientConfig) errs.push(required(configPath, 'required when strategy is set to Webhook'))
    else appendAll(errs, validateClientConfig(clientConfig, configPath))
    appendAll(errs, validateReviewVersions(reviewVersions, requireAcceptedReviewVersion, path.child('conversionReviewVersions')))
  } else {
    const notWebhook = 'should not be set when strategy is not set to Webhook'
    if (clientConfig) errs.push(forbiddenField(configPath, notWebhook))
    if (reviewVersions.length) errs.push(forbiddenField(path.child('conversionReviewVersions'), notWebhook))
  }
  return errs
}
