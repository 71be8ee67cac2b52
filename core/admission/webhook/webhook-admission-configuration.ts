/**
 * The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins' own
 * configuration in the AdmissionConfiguration file: a kubeconfig of client
 * credentials per webhook host. It is decoded as upstream reads it
 * (`kind: WebhookAdmissionConfiguration` in apiserver.config.k8s.io/v1,
 * `kind: WebhookAdmission` in v1alpha1, `kubeConfigFile` an absolute path),
 * unknown fields refused. This server does not present credentials per
 * host, so a valid one is refused too: webhooks would otherwise be called
 * without the credentials the file asks for.
 */
import { z } from 'zod'
import { CONFIG_GROUP, type ConfigKind, decodeConfigDocument } from '../../config/decode.js'
import { goString } from '../../config/fields.js'
import { isAbsolutePath } from '../../config/file-path.js'
import { type FieldError, FieldPath, forbiddenField, invalid } from '../../machinery/field.js'

export interface WebhookAdmissionConfiguration {
  kubeConfigFile: string
}

const V1ALPHA1 = `${CONFIG_GROUP}/v1alpha1`

function validate(config: WebhookAdmissionConfiguration): FieldError[] {
  const at = FieldPath.root('kubeConfigFile')
  // Upstream refuses a relative path, the empty one included.
  if (!isAbsolutePath(config.kubeConfigFile)) return [invalid(at, config.kubeConfigFile, 'must be an absolute file path')]
  return [forbiddenField(at, 'webhook client credentials per host are not supported by this server; remove the configuration of this plugin')]
}

const schema = z.strictObject({ kubeConfigFile: goString })

// Each version registers its own kind name upstream; a kind is not read in the other version.
const V1: ConfigKind<WebhookAdmissionConfiguration> = { kind: 'WebhookAdmissionConfiguration', apiVersions: [`${CONFIG_GROUP}/v1`], schema, validate }
const V1_ALPHA1: ConfigKind<WebhookAdmissionConfiguration> = { kind: 'WebhookAdmission', apiVersions: [V1ALPHA1], schema, validate }

/** Decodes and checks the configuration; a valid one is refused as well (see above), so this only ever throws ConfigFileError. */
export function decodeWebhookAdmissionConfiguration(raw: unknown, source: string): WebhookAdmissionConfiguration {
  const alpha = typeof raw === 'object' && raw !== null && (raw as { apiVersion?: unknown }).apiVersion === V1ALPHA1
  return decodeConfigDocument(raw, source, alpha ? V1_ALPHA1 : V1)
}
