/**
 * EgressSelectorConfiguration, the file of `--egress-selector-config-file`:
 * through which proxy the server reaches the control plane, the cluster
 * (node agents, aggregated API servers, webhooks) and etcd. The structure and
 * upstream's rules are checked with field paths; this server dials every
 * connection directly, so a selection that names HTTPConnect or GRPC stops
 * start-up rather than being ignored (a proxy is often a network boundary).
 */
import { z } from 'zod'
import { duplicate, type FieldError, FieldPath, forbiddenField, invalid, notSupported, required } from '../validation/field.js'
import { CONFIG_GROUP, type ConfigKind, decodeConfig } from './decode.js'
import { goList, goString } from './fields.js'

const transportSchema = z.strictObject({
  tcp: z.strictObject({ url: goString, tlsConfig: z.strictObject({ caBundle: goString, clientKey: goString, clientCert: goString }).nullish() }).nullish(),
  uds: z.strictObject({ udsName: goString }).nullish(),
})

const selectionSchema = z.strictObject({
  name: goString,
  connection: z.strictObject({ proxyProtocol: goString, transport: transportSchema.nullish() }),
})

const egressSchema = z.strictObject({ egressSelections: goList(selectionSchema) })

export type EgressSelectorConfiguration = z.infer<typeof egressSchema>

const NAMES = ['controlplane', 'cluster', 'etcd'] as const
const PROTOCOLS = ['HTTPConnect', 'GRPC', 'Direct'] as const

function validateEgress(config: EgressSelectorConfiguration): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  config.egressSelections.forEach((selection, i) => {
    const at = FieldPath.root('egressSelections').index(i)
    // `master` is upstream's former name of `controlplane`.
    const name = selection.name === 'master' ? 'controlplane' : selection.name
    if (!name) errs.push(required(at.child('name'), 'must specify a name'))
    else if (!(NAMES as readonly string[]).includes(name)) errs.push(notSupported(at.child('name'), selection.name, NAMES))
    else if (seen.has(name)) errs.push(duplicate(at.child('name'), selection.name))
    seen.add(name)
    const protocol = selection.connection.proxyProtocol
    const protocolPath = at.child('connection').child('proxyProtocol')
    if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
      errs.push(notSupported(protocolPath, protocol, PROTOCOLS))
      return
    }
    if (protocol === 'Direct') {
      if (selection.connection.transport) errs.push(forbiddenField(at.child('connection').child('transport'), 'transport must be empty for the Direct proxy protocol'))
      return
    }
    errs.push(invalid(protocolPath, protocol, 'this server connects directly: only "Direct" is supported, and a proxy it would not use must not be configured'))
  })
  return errs
}

const EgressSelectorKind: ConfigKind<EgressSelectorConfiguration> = {
  kind: 'EgressSelectorConfiguration',
  apiVersions: ['apiserver.k8s.io/v1beta1', `${CONFIG_GROUP}/v1`, 'apiserver.k8s.io/v1', 'apiserver.k8s.io/v1alpha1'],
  schema: egressSchema,
  validate: validateEgress,
}

/** Reads and validates an EgressSelectorConfiguration. Throws ConfigFileError listing every problem. */
export function loadEgressSelectorConfiguration(text: string, source: string): EgressSelectorConfiguration {
  return decodeConfig(text, source, EgressSelectorKind)
}
