/**
 * The factories of MutatingAdmissionWebhook and ValidatingAdmissionWebhook:
 * each follows its kind of configuration and the namespaces through a
 * watch, and calls webhooks through the server's webhook client, Service
 * references resolved as the CRD conversion webhooks' are.
 *
 * The plugins' own configuration (a kubeconfig with credentials per
 * webhook host) is decoded and refused before a factory runs, in
 * webhook-admission-configuration.ts: a server given one refuses to start
 * rather than call webhooks without the credentials.
 */
import { serviceResolver } from '../../crd/service-resolver.js'
import type { AdmissionPluginContext, AdmissionPluginInstance } from '../plugins.js'
import { watchWebhookConfigurations } from './configuration-index.js'
import { mutatingWebhookAdmission } from './mutating.js'
import { validatingWebhookAdmission } from './validating.js'
import type { WebhookType } from './webhook.js'

function webhookPlugin(type: WebhookType, context: AdmissionPluginContext): AdmissionPluginInstance {
  const index = watchWebhookConfigurations({ catalogue: context.catalogue, informers: context.informers }, type)
  const deps = {
    catalogue: context.catalogue,
    stored: context.stored,
    authorizer: context.authorizer,
    index,
    logger: context.logger,
    client: context.webhookClient,
    resolveService: serviceResolver((resource, ns, name) => context.stored.get({ group: '', version: 'v1', resource }, ns, name)),
    ...(context.metrics ? { metrics: context.metrics } : {}),
  }
  return {
    plugin: type === 'mutating' ? mutatingWebhookAdmission(deps) : validatingWebhookAdmission(deps),
    ready: index.ready,
    stop: () => index.stop(),
  }
}

export const mutatingAdmissionWebhook = (context: AdmissionPluginContext): AdmissionPluginInstance => webhookPlugin('mutating', context)
export const validatingAdmissionWebhook = (context: AdmissionPluginContext): AdmissionPluginInstance => webhookPlugin('validating', context)
