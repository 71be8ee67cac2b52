/**
 * Rules for persistence (upstream: EtcdOptions.Validate, ParseWatchCacheSizes).
 */
import { parseWatchCacheSizes } from '../../../storage/watch-cache-sizes.js'
import { selectControllers } from '../../../controllers/workloads/catalogue.js'
import type { Rule } from './rule.js'

export const STORAGE_BACKENDS = ['kvstore3', 'etcd3'] as const
export const STORAGE_MEDIA_TYPES = ['application/json', 'application/vnd.kubernetes.protobuf', 'application/yaml'] as const

/** Each name of --controllers must be a controller the server has: one asked for and never run would leave its objects unreconciled. */
const controllers: Rule = ({ values }) => {
  try {
    selectControllers(values.controllers)
    return []
  } catch (err) {
    return [(err as Error).message]
  }
}

const simulatedNodes: Rule = ({ values }) => (values['simulated-nodes'] < 0 ? [`--simulated-nodes must be at least 0, not ${values['simulated-nodes']}`] : [])

const storageBackend: Rule = ({ values }) => {
  const backend = values['storage-backend']
  if (backend === '' || (STORAGE_BACKENDS as readonly string[]).includes(backend)) return []
  return ["--storage-backend invalid, allowed values: kvstore3 (also spelled etcd3). If not specified, it will default to 'kvstore3'"]
}

const storageMediaType: Rule = ({ values }) => {
  const type = values['storage-media-type']
  if (type === '' || (STORAGE_MEDIA_TYPES as readonly string[]).includes(type)) return []
  return [`--storage-media-type ${JSON.stringify(type)} invalid, allowed values: ${STORAGE_MEDIA_TYPES.join(', ')}`]
}

/** etcd's client takes http and https URLs with a host and a port, and unix sockets. */
function serverUrlProblem(text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'is not a URL'
  }
  if (url.protocol === 'unix:' || url.protocol === 'unixs:') return undefined
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `has scheme ${JSON.stringify(url.protocol.slice(0, -1))}; use http, https, unix or unixs`
  if (url.hostname === '' || url.port === '') return 'must have the form scheme://host:port'
  return undefined
}

const kvstoreServers: Rule = ({ values }) =>
  values['kvstore-servers'].flatMap((server) => {
    const problem = serverUrlProblem(server)
    return problem ? [`--kvstore-servers: ${JSON.stringify(server)} ${problem}`] : []
  })

const kvstoreServersOverrides: Rule = ({ values }) =>
  values['kvstore-servers-overrides'].flatMap((override) => {
    const [resource = '', servers = '', ...rest] = override.split('#')
    if (rest.length || !override.includes('#') || resource.split('/').length !== 2) {
      return ['--kvstore-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated']
    }
    return servers.split(';').flatMap((server) => {
      const problem = serverUrlProblem(server)
      return problem ? [`--kvstore-servers-overrides: ${JSON.stringify(server)} in ${JSON.stringify(override)} ${problem}`] : []
    })
  })

const encryptionReload: Rule = ({ values }) =>
  values['encryption-provider-config-automatic-reload'] && values['encryption-provider-config'] === ''
    ? ['--encryption-provider-config-automatic-reload must be set with --encryption-provider-config']
    : []

/** `resource[.group]#size`, read by the watch cache's own parser so that both agree. */
const watchCacheSizes: Rule = ({ values }) => {
  try {
    parseWatchCacheSizes(values['watch-cache-sizes'])
    return []
  } catch (err) {
    return [`--watch-cache-sizes: ${(err as Error).message}`]
  }
}

export const PERSISTENCE_RULES: readonly Rule[] = [
  controllers,
  simulatedNodes,
  storageBackend,
  storageMediaType,
  kvstoreServers,
  kvstoreServersOverrides,
  encryptionReload,
  watchCacheSizes,
]
