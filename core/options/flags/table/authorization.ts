/**
 * Authorization flags (spec: "Authorization flags"): the authorizer chain,
 * given either as modes or as one AuthorizationConfiguration file.
 */
import { flag } from '../spec.js'
import { NOT_YET } from './not-yet.js'

const section = 'Authorization'
const status = 'refused'
const pending = NOT_YET.authorization

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const

/** The modes the server enforces today; any other given stops start-up (fail closed). */
export const ENFORCED_AUTHORIZATION_MODES: readonly string[] = ['AlwaysAllow', 'AlwaysDeny', 'RBAC']

export const AUTHORIZATION_FLAGS = [
  flag({
    name: 'authorization-config',
    kind: 'string',
    default: '',
    section,
    status,
    pending,
    help: 'File of kind AuthorizationConfiguration describing the authorizer chain. Needs the StructuredAuthorizationConfiguration feature gate. Not together with --authorization-mode or the --authorization-webhook-* flags.',
  }),
  flag({
    name: 'authorization-mode',
    kind: 'strings',
    default: [],
    section,
    status: 'active',
    help: `Authorizers asked in order, comma separated: ${AUTHORIZATION_MODES.join(', ')}. Empty: AlwaysAllow, unless --authorization-config is given. The first that allows or denies decides; members of system:masters are allowed before any. RBAC allows what Roles, ClusterRoles and their bindings grant (and never denies). Only ${ENFORCED_AUTHORIZATION_MODES.join(', ')} are enforced yet: any other mode stops start-up.`,
  }),
  flag({
    name: 'authorization-policy-file',
    kind: 'string',
    default: '',
    section,
    status,
    pending,
    help: 'ABAC policy, one JSON object per line; used with --authorization-mode=ABAC.',
  }),
  flag({
    name: 'authorization-webhook-cache-authorized-ttl',
    kind: 'duration',
    default: 300_000,
    section,
    status,
    pending,
    help: "How long the webhook authorizer's 'authorized' answers are cached.",
  }),
  flag({
    name: 'authorization-webhook-cache-unauthorized-ttl',
    kind: 'duration',
    default: 30_000,
    section,
    status,
    pending,
    help: "How long the webhook authorizer's 'unauthorized' answers are cached.",
  }),
  flag({
    name: 'authorization-webhook-config-file',
    kind: 'string',
    default: '',
    section,
    status,
    pending,
    help: 'Kubeconfig-format file of the remote service asked for access decisions; used with --authorization-mode=Webhook.',
  }),
  flag({
    name: 'authorization-webhook-version',
    kind: 'string',
    default: 'v1beta1',
    section,
    status,
    pending,
    help: 'Version of the authorization.k8s.io SubjectAccessReview sent to and expected from the webhook: v1 or v1beta1.',
  }),
] as const
