/**
 * Authorization flags (spec: "Authorization flags"): the authorizer chain,
 * given either as modes or as one AuthorizationConfiguration file.
 */
import { flag } from '../spec.js'

const section = 'Authorization'
const status = 'active'

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const

/** The modes the server enforces today; any other given stops start-up (fail closed). */
export const ENFORCED_AUTHORIZATION_MODES: readonly string[] = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'Node', 'RBAC']

export const AUTHORIZATION_FLAGS = [
  flag({
    name: 'authorization-config',
    kind: 'string',
    default: '',
    section,
    status,
    help: 'File of kind AuthorizationConfiguration describing the authorizer chain (Node, RBAC, Webhook with match conditions and a failure policy, AlwaysAllow, AlwaysDeny). Re-read when it changes: a valid new file replaces the chain without a restart, an invalid one is logged and the chain in effect stays. Needs the StructuredAuthorizationConfiguration feature gate. Not together with --authorization-mode or the --authorization-webhook-* flags.',
  }),
  flag({
    name: 'authorization-mode',
    kind: 'strings',
    default: [],
    section,
    status: 'active',
    help: `Authorizers asked in order, comma separated: ${AUTHORIZATION_MODES.join(', ')}. Empty: AlwaysAllow, unless --authorization-config is given. The first that allows or denies decides; members of system:masters are allowed before any. RBAC allows what Roles, ClusterRoles and their bindings grant (and never denies).`,
  }),
  flag({
    name: 'authorization-policy-file',
    kind: 'string',
    default: '',
    section,
    status,
    help: 'ABAC policy, one JSON object per line (abac.authorization.kubernetes.io/v1beta1 Policy, or the unversioned form); used with --authorization-mode=ABAC. A line that does not parse stops start-up.',
  }),
  flag({
    name: 'authorization-webhook-cache-authorized-ttl',
    kind: 'duration',
    default: 300_000,
    section,
    status,
    help: "How long the webhook authorizer's 'authorized' answers are cached, per user and request; 0 caches none.",
  }),
  flag({
    name: 'authorization-webhook-cache-unauthorized-ttl',
    kind: 'duration',
    default: 30_000,
    section,
    status,
    help: "How long the webhook authorizer's 'unauthorized' answers are cached, per user and request; 0 caches none.",
  }),
  flag({
    name: 'authorization-webhook-config-file',
    kind: 'string',
    default: '',
    section,
    status,
    help: 'Kubeconfig-format file of the remote service asked for access decisions (its CA is trusted, its client certificate or token presented); used with --authorization-mode=Webhook. A failed call is no decision (the next mode decides).',
  }),
  flag({
    name: 'authorization-webhook-version',
    kind: 'string',
    default: 'v1beta1',
    section,
    status,
    help: 'Version of the authorization.k8s.io SubjectAccessReview sent to and expected from the webhook: v1 or v1beta1.',
  }),
] as const
