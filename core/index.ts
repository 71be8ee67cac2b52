/**
 * The package's entry point for embedders:
 *
 *   import { createApiServer } from 'kube-apiserver-ts'
 *   const server = createApiServer()
 *   const res = await server.fetch(new Request('http://in-process/api/v1/namespaces'))
 */
export { type ApiServer, type ApiServerSnapshot, createApiServer } from './server.js'
export { type ManualClock, manualClock } from './embedding/clock.js'
export type { SeedObjects } from './embedding/seed.js'
export type { ActivityLog, RecordedEvent, RecordedRequest, RecordOptions } from './embedding/activity.js'
export type { ApiServerOptions } from './options/api-server-options.js'
export type { AuthenticationOptions, TokenWebhookOptions } from './authn/authentication-options.js'
export type { StaticToken } from './config/token-file.js'
export { ADMIN_IDENTITY } from './machinery/identities.js'
export { type AuthorizerSpec, configuredAuthorizerSpecs, type LegacyWebhookOptions } from './authz/authorizer-specs.js'
export type { WebhookConnection } from './authz/webhook.js'
export type { ClientCertificate, ConnectionInfo, ServerPorts } from './ports.js'
export type { Logger } from './logging/logger.js'
export type { YamlDecoder, YamlJsonAnswer } from './http/yaml-off-thread.js'
export { yamlToJsonAnswer } from './http/yaml-off-thread.js'
export type { KubeList, KubeObject, ObjectMeta, UserInfo } from './machinery/object.js'
export type { Storage } from './storage/interface.js'
export { MemoryStorage } from './storage/memory.js'
export { WatchCache, type WatchCacheOptions } from './storage/watch-cache.js'
export { codecFor, type ObjectCodec } from './storage/codec.js'
export { StatusError } from './machinery/status-error.js'
