/**
 * Upstream's initial priority-and-fairness configuration (k8s.io/apiserver
 * apis/flowcontrol/bootstrap at 1.32) as data: the mandatory objects
 * (`exempt`, `catch-all`), which the server keeps as they are, and the
 * suggested ones, which it creates and, while their
 * `apf.kubernetes.io/autoupdate-spec` annotation is "true", keeps current.
 */

/** The annotation that lets the server keep an object's spec as upstream's. */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec'

type Obj = Record<string, unknown>

export interface BootstrapObject {
  name: string
  spec: Obj
  /** Mandatory objects are recreated and their spec enforced; suggested ones only while auto-updated. */
  mandatory: boolean
}

const limited = (shares: number, lendablePercent: number, queuing?: { queues: number; handSize: number; queueLengthLimit: number }): Obj => ({
  type: 'Limited',
  limited: {
    nominalConcurrencyShares: shares,
    lendablePercent,
    limitResponse: queuing ? { type: 'Queue', queuing } : { type: 'Reject' },
  },
})

const queues = (queues: number, handSize: number): { queues: number; handSize: number; queueLengthLimit: number } => ({
  queues,
  handSize,
  queueLengthLimit: 50,
})

export const BOOTSTRAP_PRIORITY_LEVELS: readonly BootstrapObject[] = [
  { name: 'exempt', mandatory: true, spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } } },
  { name: 'catch-all', mandatory: true, spec: limited(5, 0) },
  { name: 'system', mandatory: false, spec: limited(30, 33, queues(64, 6)) },
  { name: 'node-high', mandatory: false, spec: limited(40, 25, queues(64, 6)) },
  { name: 'leader-election', mandatory: false, spec: limited(10, 0, queues(16, 4)) },
  { name: 'workload-high', mandatory: false, spec: limited(40, 50, queues(128, 6)) },
  { name: 'workload-low', mandatory: false, spec: limited(100, 90, queues(128, 6)) },
  { name: 'global-default', mandatory: false, spec: limited(20, 50, queues(128, 6)) },
]

const group = (name: string): Obj => ({ kind: 'Group', group: { name } })
const user = (name: string): Obj => ({ kind: 'User', user: { name } })
const kubeSystemServiceAccount = (name: string): Obj => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } })

const everyResource: Obj = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }
const everyNonResource: Obj = { verbs: ['*'], nonResourceURLs: ['*'] }
const everything = (subjects: Obj[]): Obj => ({ subjects, resourceRules: [everyResource], nonResourceRules: [everyNonResource] })
const getCreateUpdate = (apiGroup: string, resources: string[], namespaces: string[]): Obj => ({
  verbs: ['get', 'create', 'update'],
  apiGroups: [apiGroup],
  resources,
  namespaces,
})

function flowSchema(level: string, precedence: number, distinguisher: 'ByUser' | 'ByNamespace' | undefined, rules: Obj[]): Obj {
  return {
    priorityLevelConfiguration: { name: level },
    matchingPrecedence: precedence,
    ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
    rules,
  }
}

const ALL_USERS = [group('system:unauthenticated'), group('system:authenticated')]
const CONTROLLER_MANAGER = 'system:kube-controller-manager'
const SCHEDULER = 'system:kube-scheduler'

export const BOOTSTRAP_FLOW_SCHEMAS: readonly BootstrapObject[] = [
  { name: 'exempt', mandatory: true, spec: flowSchema('exempt', 1, undefined, [everything([group('system:masters')])]) },
  { name: 'catch-all', mandatory: true, spec: flowSchema('catch-all', 10000, 'ByUser', [everything(ALL_USERS)]) },
  {
    name: 'probes',
    mandatory: false,
    spec: flowSchema('exempt', 2, undefined, [{ subjects: ALL_USERS, nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }] }]),
  },
  {
    name: 'system-leader-election',
    mandatory: false,
    spec: flowSchema('leader-election', 100, 'ByUser', [
      {
        subjects: [user(CONTROLLER_MANAGER), user(SCHEDULER), kubeSystemServiceAccount('*')],
        resourceRules: [getCreateUpdate('', ['endpoints', 'configmaps'], ['kube-system']), getCreateUpdate('coordination.k8s.io', ['leases'], ['*'])],
      },
    ]),
  },
  {
    name: 'endpoint-controller',
    mandatory: false,
    spec: flowSchema('workload-high', 150, 'ByUser', [
      {
        subjects: [user(CONTROLLER_MANAGER), kubeSystemServiceAccount('endpoint-controller'), kubeSystemServiceAccount('endpointslicemirroring-controller')],
        resourceRules: [getCreateUpdate('', ['endpoints'], ['*'])],
      },
    ]),
  },
  {
    name: 'workload-leader-election',
    mandatory: false,
    spec: flowSchema('leader-election', 200, 'ByUser', [
      {
        subjects: [kubeSystemServiceAccount('*')],
        resourceRules: [getCreateUpdate('', ['endpoints', 'configmaps'], ['*']), getCreateUpdate('coordination.k8s.io', ['leases'], ['*'])],
      },
    ]),
  },
  {
    name: 'system-node-high',
    mandatory: false,
    spec: flowSchema('node-high', 400, 'ByUser', [
      {
        subjects: [group('system:nodes')],
        resourceRules: [
          { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], namespaces: ['*'], clusterScope: true },
          { verbs: ['*'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
        ],
      },
    ]),
  },
  { name: 'system-nodes', mandatory: false, spec: flowSchema('system', 500, 'ByUser', [everything([group('system:nodes')])]) },
  { name: 'kube-controller-manager', mandatory: false, spec: flowSchema('workload-high', 800, 'ByNamespace', [everything([user(CONTROLLER_MANAGER)])]) },
  { name: 'kube-scheduler', mandatory: false, spec: flowSchema('workload-high', 800, 'ByNamespace', [everything([user(SCHEDULER)])]) },
  {
    name: 'kube-system-service-accounts',
    mandatory: false,
    spec: flowSchema('workload-high', 900, 'ByNamespace', [everything([kubeSystemServiceAccount('*')])]),
  },
  { name: 'service-accounts', mandatory: false, spec: flowSchema('workload-low', 9000, 'ByUser', [everything([group('system:serviceaccounts')])]) },
  { name: 'global-default', mandatory: false, spec: flowSchema('global-default', 9900, 'ByUser', [everything(ALL_USERS)]) },
]
