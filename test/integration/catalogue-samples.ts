/**
 * One representative object per built-in resource, and the storage key
 * upstream would keep it under (in namespace `default`): what the catalogue
 * tests create, read back and look for in storage.
 */

export interface Sample {
  /** `group/version/resource`, `/v1/pods` for the core group. */
  gvr: string
  body: Record<string, unknown>
  /** The key under the storage prefix, as upstream lays it out. */
  key: string
}

const podSpec = {
  containers: [
    {
      name: 'web',
      image: 'nginx:1.27',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      resources: { limits: { cpu: '500m', memory: '128Mi' } },
      readinessProbe: { httpGet: { path: '/healthz', port: 80 }, periodSeconds: 5 },
      volumeMounts: [{ name: 'config', mountPath: '/etc/web' }],
    },
  ],
  volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
  restartPolicy: 'Always',
}
const template = { metadata: { labels: { app: 'web' } }, spec: podSpec }
/** A real PKCS#10 request (ECDSA P-256, subject CN=csr1), base64 of its PEM: the server checks its signature. */
const CSR1_REQUEST =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIS01IRUNBUUF3RHpFTk1Bc0dBMVVFQXhNRVkzTnlNVEJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSApBMElBQkNBd2NYWG85YzRzbC8wVytLcEZJUEc0N3ZEYlZsb3h2ZXJuUDFoSW0zQjA0TnpaeE9XSThManJXNkZ6CmZkYlRySU4yRG80ZjNPMHNxQ3FQTFdaYmxKdWdBREFLQmdncWhrak9QUVFEQWdOSkFEQkdBaUVBZzJrS1FGVG4KQkVlV3RyTC9IVFNuM0djYWVISURCb0xjTGI1azQ0ZFBmUVlDSVFEeS9IbjlsSTk4NzNRVUdyR0FDZWlMQ2JFdQp0UklOKzA5OGI3NElLb0tMMEE9PQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0='
const selector = { matchLabels: { app: 'web' } }
/** Admission policies match on at least one resource rule. */
const policyRules = { resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] }

export const SAMPLES: readonly Sample[] = [
  { gvr: '/v1/configmaps', body: { metadata: { name: 'cm1' }, data: { a: 'b' } }, key: '/registry/configmaps/default/cm1' },
  {
    gvr: '/v1/endpoints',
    body: { metadata: { name: 'ep1' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
    key: '/registry/services/endpoints/default/ep1',
  },
  {
    gvr: '/v1/events',
    body: { metadata: { name: 'ev1' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Started', message: 'hi', type: 'Normal' },
    key: '/registry/events/default/ev1',
  },
  { gvr: '/v1/limitranges', body: { metadata: { name: 'lr1' }, spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] } }, key: '/registry/limitranges/default/lr1' },
  { gvr: '/v1/namespaces', body: { metadata: { name: 'ns1' } }, key: '/registry/namespaces/ns1' },
  { gvr: '/v1/nodes', body: { metadata: { name: 'node1' }, spec: { unschedulable: true } }, key: '/registry/minions/node1' },
  {
    gvr: '/v1/persistentvolumeclaims',
    body: { metadata: { name: 'pvc1' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    key: '/registry/persistentvolumeclaims/default/pvc1',
  },
  {
    gvr: '/v1/persistentvolumes',
    body: { metadata: { name: 'pv1' }, spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, hostPath: { path: '/data/pv1' } } },
    key: '/registry/persistentvolumes/pv1',
  },
  // No token volume from the ServiceAccount plugin, so that the pod reads back as sent.
  { gvr: '/v1/pods', body: { metadata: { name: 'pod1', labels: { app: 'web' } }, spec: { ...podSpec, automountServiceAccountToken: false } }, key: '/registry/pods/default/pod1' },
  { gvr: '/v1/podtemplates', body: { metadata: { name: 'pt1' }, template }, key: '/registry/podtemplates/default/pt1' },
  {
    gvr: '/v1/replicationcontrollers',
    body: { metadata: { name: 'rc1' }, spec: { replicas: 2, selector: { app: 'web' }, template } },
    key: '/registry/controllers/default/rc1',
  },
  { gvr: '/v1/resourcequotas', body: { metadata: { name: 'rq1' }, spec: { hard: { pods: '10' } } }, key: '/registry/resourcequotas/default/rq1' },
  { gvr: '/v1/secrets', body: { metadata: { name: 's1' }, data: { k: 'dg==' } }, key: '/registry/secrets/default/s1' },
  { gvr: '/v1/serviceaccounts', body: { metadata: { name: 'sa1' } }, key: '/registry/serviceaccounts/default/sa1' },
  {
    gvr: '/v1/services',
    body: { metadata: { name: 'svc1' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } },
    key: '/registry/services/specs/default/svc1',
  },
  {
    gvr: 'admissionregistration.k8s.io/v1/mutatingadmissionpolicies',
    body: { metadata: { name: 'map1' }, spec: { matchConstraints: policyRules, mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{}' } }] } },
    key: '/registry/mutatingadmissionpolicies/map1',
  },
  {
    gvr: 'admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings',
    body: { metadata: { name: 'mapb1' }, spec: { policyName: 'map1' } },
    key: '/registry/mutatingadmissionpolicybindings/mapb1',
  },
  {
    gvr: 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    body: {
      metadata: { name: 'mwc1' },
      webhooks: [
        {
          name: 'hook.example.com',
          clientConfig: { url: 'https://hook.example.com/' },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          // Stored and read back like any object; no namespace carries the label, so the pods the suite creates never reach it.
          namespaceSelector: { matchLabels: { 'catalogue-sample': 'never' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    },
    key: '/registry/mutatingwebhookconfigurations/mwc1',
  },
  {
    gvr: 'admissionregistration.k8s.io/v1/validatingadmissionpolicies',
    body: { metadata: { name: 'vap1' }, spec: { matchConstraints: policyRules, validations: [{ expression: 'true' }] } },
    key: '/registry/validatingadmissionpolicies/vap1',
  },
  {
    gvr: 'admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
    body: { metadata: { name: 'vapb1' }, spec: { policyName: 'vap1', validationActions: ['Deny'] } },
    key: '/registry/validatingadmissionpolicybindings/vapb1',
  },
  {
    gvr: 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    body: { metadata: { name: 'vwc1' }, webhooks: [] },
    key: '/registry/validatingwebhookconfigurations/vwc1',
  },
  {
    gvr: 'apiextensions.k8s.io/v1/customresourcedefinitions',
    body: {
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    },
    key: '/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com',
  },
  {
    gvr: 'apiregistration.k8s.io/v1/apiservices',
    body: { metadata: { name: 'v1.example.com' }, spec: { group: 'example.com', version: 'v1', groupPriorityMinimum: 100, versionPriority: 10 } },
    key: '/registry/apiregistration.k8s.io/apiservices/v1.example.com',
  },
  { gvr: 'apps/v1/controllerrevisions', body: { metadata: { name: 'cr1' }, revision: 1, data: { any: 'thing' } }, key: '/registry/controllerrevisions/default/cr1' },
  { gvr: 'apps/v1/daemonsets', body: { metadata: { name: 'ds1' }, spec: { selector, template } }, key: '/registry/daemonsets/default/ds1' },
  { gvr: 'apps/v1/deployments', body: { metadata: { name: 'deploy1' }, spec: { replicas: 3, selector, template } }, key: '/registry/deployments/default/deploy1' },
  { gvr: 'apps/v1/replicasets', body: { metadata: { name: 'rs1' }, spec: { replicas: 1, selector, template } }, key: '/registry/replicasets/default/rs1' },
  { gvr: 'apps/v1/statefulsets', body: { metadata: { name: 'sts1' }, spec: { serviceName: 'web', selector, template } }, key: '/registry/statefulsets/default/sts1' },
  {
    gvr: 'autoscaling/v2/horizontalpodautoscalers',
    body: {
      metadata: { name: 'hpa2' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'deploy1' },
        maxReplicas: 5,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
      },
    },
    key: '/registry/horizontalpodautoscalers/default/hpa2',
  },
  {
    gvr: 'autoscaling/v1/horizontalpodautoscalers',
    body: {
      metadata: { name: 'hpa1' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'deploy1' }, maxReplicas: 3, targetCPUUtilizationPercentage: 50 },
    },
    key: '/registry/horizontalpodautoscalers/default/hpa1',
  },
  {
    gvr: 'batch/v1/cronjobs',
    body: { metadata: { name: 'cj1' }, spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { ...podSpec, restartPolicy: 'Never' } } } } } },
    key: '/registry/cronjobs/default/cj1',
  },
  { gvr: 'batch/v1/jobs', body: { metadata: { name: 'job1' }, spec: { template: { spec: { ...podSpec, restartPolicy: 'Never' } } } }, key: '/registry/jobs/default/job1' },
  {
    gvr: 'certificates.k8s.io/v1/certificatesigningrequests',
    body: { metadata: { name: 'csr1' }, spec: { signerName: 'example.com/signer', request: CSR1_REQUEST, usages: ['client auth'] } },
    key: '/registry/certificatesigningrequests/csr1',
  },
  { gvr: 'coordination.k8s.io/v1/leases', body: { metadata: { name: 'lease1' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }, key: '/registry/leases/default/lease1' },
  {
    gvr: 'discovery.k8s.io/v1/endpointslices',
    body: { metadata: { name: 'slice1' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ port: 80 }] },
    key: '/registry/endpointslices/default/slice1',
  },
  {
    gvr: 'events.k8s.io/v1/events',
    body: { metadata: { name: 'ev2' }, regarding: { kind: 'Pod', name: 'p', namespace: 'default' }, note: 'hi', reason: 'Started', type: 'Normal', action: 'Start', eventTime: '2024-05-01T10:00:00.000000Z', reportingController: 'example.com/c', reportingInstance: 'c-1' },
    key: '/registry/events/default/ev2',
  },
  {
    gvr: 'flowcontrol.apiserver.k8s.io/v1/flowschemas',
    body: { metadata: { name: 'fs1' }, spec: { priorityLevelConfiguration: { name: 'plc1' }, matchingPrecedence: 500 } },
    key: '/registry/flowschemas/fs1',
  },
  {
    gvr: 'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations',
    body: { metadata: { name: 'plc1' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 10, limitResponse: { type: 'Reject' } } } },
    key: '/registry/prioritylevelconfigurations/plc1',
  },
  { gvr: 'networking.k8s.io/v1/ingressclasses', body: { metadata: { name: 'ic1' }, spec: { controller: 'example.com/ingress' } }, key: '/registry/ingressclasses/ic1' },
  {
    gvr: 'networking.k8s.io/v1/ingresses',
    body: { metadata: { name: 'ing1' }, spec: { defaultBackend: { service: { name: 'svc1', port: { number: 80 } } }, rules: [{ host: 'a.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'svc1', port: { number: 80 } } } }] } }] } },
    key: '/registry/ingress/default/ing1',
  },
  {
    gvr: 'networking.k8s.io/v1/ipaddresses',
    body: { metadata: { name: '10.96.0.10' }, spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'svc1' } } },
    key: '/registry/ipaddresses/10.96.0.10',
  },
  { gvr: 'networking.k8s.io/v1/networkpolicies', body: { metadata: { name: 'np1' }, spec: { podSelector: selector, policyTypes: ['Ingress'] } }, key: '/registry/networkpolicies/default/np1' },
  { gvr: 'networking.k8s.io/v1/servicecidrs', body: { metadata: { name: 'cidr1' }, spec: { cidrs: ['10.96.0.0/16'] } }, key: '/registry/servicecidrs/cidr1' },
  { gvr: 'node.k8s.io/v1/runtimeclasses', body: { metadata: { name: 'rc-gvisor' }, handler: 'runsc' }, key: '/registry/runtimeclasses/rc-gvisor' },
  { gvr: 'policy/v1/poddisruptionbudgets', body: { metadata: { name: 'pdb1' }, spec: { minAvailable: 1, selector } }, key: '/registry/poddisruptionbudgets/default/pdb1' },
  {
    gvr: 'rbac.authorization.k8s.io/v1/clusterrolebindings',
    body: { metadata: { name: 'crb1' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'devs', apiGroup: 'rbac.authorization.k8s.io' }] },
    key: '/registry/clusterrolebindings/crb1',
  },
  {
    gvr: 'rbac.authorization.k8s.io/v1/clusterroles',
    body: { metadata: { name: 'system:viewer' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
    key: '/registry/clusterroles/system:viewer',
  },
  {
    gvr: 'rbac.authorization.k8s.io/v1/rolebindings',
    body: { metadata: { name: 'rb1' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r1' }, subjects: [{ kind: 'ServiceAccount', name: 'sa1', namespace: 'default' }] },
    key: '/registry/rolebindings/default/rb1',
  },
  { gvr: 'rbac.authorization.k8s.io/v1/roles', body: { metadata: { name: 'r1' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }, key: '/registry/roles/default/r1' },
  { gvr: 'resource.k8s.io/v1/deviceclasses', body: { metadata: { name: 'gpu' }, spec: { selectors: [{ cel: { expression: 'true' } }] } }, key: '/registry/deviceclasses/gpu' },
  {
    gvr: 'resource.k8s.io/v1/resourceclaims',
    body: { metadata: { name: 'claim1' }, spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu' } }] } } },
    key: '/registry/resourceclaims/default/claim1',
  },
  {
    gvr: 'resource.k8s.io/v1/resourceclaimtemplates',
    body: { metadata: { name: 'tmpl1' }, spec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu' } }] } } } },
    key: '/registry/resourceclaimtemplates/default/tmpl1',
  },
  {
    gvr: 'resource.k8s.io/v1/resourceslices',
    body: { metadata: { name: 'slice-node1' }, spec: { driver: 'gpu.example.com', nodeName: 'node1', pool: { name: 'node1', generation: 1, resourceSliceCount: 1 } } },
    key: '/registry/resourceslices/slice-node1',
  },
  { gvr: 'scheduling.k8s.io/v1/priorityclasses', body: { metadata: { name: 'high' }, value: 1000, description: 'urgent' }, key: '/registry/priorityclasses/high' },
  { gvr: 'storage.k8s.io/v1/csidrivers', body: { metadata: { name: 'csi.example.com' }, spec: { attachRequired: false } }, key: '/registry/csidrivers/csi.example.com' },
  {
    gvr: 'storage.k8s.io/v1/csinodes',
    body: { metadata: { name: 'node1' }, spec: { drivers: [{ name: 'csi.example.com', nodeID: 'node1' }] } },
    key: '/registry/csinodes/node1',
  },
  { gvr: 'storage.k8s.io/v1/csistoragecapacities', body: { metadata: { name: 'cap1' }, storageClassName: 'fast', capacity: '10Gi' }, key: '/registry/csistoragecapacities/default/cap1' },
  { gvr: 'storage.k8s.io/v1/storageclasses', body: { metadata: { name: 'fast' }, provisioner: 'csi.example.com' }, key: '/registry/storageclasses/fast' },
  {
    gvr: 'storage.k8s.io/v1/volumeattachments',
    body: { metadata: { name: 'va1' }, spec: { attacher: 'csi.example.com', nodeName: 'node1', source: { persistentVolumeName: 'pv1' } } },
    key: '/registry/volumeattachments/va1',
  },
  { gvr: 'storage.k8s.io/v1/volumeattributesclasses', body: { metadata: { name: 'gold' }, driverName: 'csi.example.com', parameters: { iops: '1000' } }, key: '/registry/volumeattributesclasses/gold' },
]

/** The URL of a sample's collection, in namespace `default` for namespaced resources. */
export function collectionPath(gvr: string, namespaced: boolean): string {
  const [group, version, resource] = gvr.split('/')
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`
  return namespaced ? `${prefix}/namespaces/default/${resource}` : `${prefix}/${resource}`
}

export function apiVersionOf(gvr: string): string {
  const [group, version] = gvr.split('/')
  return group ? `${group}/${version}` : version!
}
