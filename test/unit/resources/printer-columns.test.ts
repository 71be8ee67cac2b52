/**
 * Each built-in resource's Table columns against upstream's printers
 * (pkg/printers/internalversion, AddHandlers, as of 1.32): the name, type,
 * format and priority of every column in order, which is what kubectl reads
 * to print `get` and `get -o wide`. A resource upstream prints with no
 * handler of its own gets the default Name and Age.
 */
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { builtinEntries } from '../../../core/resources/builtin.js'

/** `Name|type|format|priority`, in upstream's order. */
const UPSTREAM: Record<string, string> = {
  '/pods': 'Name|string|name|0 Ready|string||0 Status|string||0 Restarts|string||0 Age|string||0 IP|string||1 Node|string||1 Nominated Node|string||1 Readiness Gates|string||1',
  '/podtemplates': 'Name|string|name|0 Containers|string||0 Images|string||0 Pod Labels|string||0',
  'policy/poddisruptionbudgets': 'Name|string|name|0 Min Available|string||0 Max Unavailable|string||0 Allowed Disruptions|integer||0 Age|string||0',
  '/replicationcontrollers': 'Name|string|name|0 Desired|integer||0 Current|integer||0 Ready|integer||0 Age|string||0 Containers|string||1 Images|string||1 Selector|string||1',
  'apps/replicasets': 'Name|string|name|0 Desired|integer||0 Current|integer||0 Ready|integer||0 Age|string||0 Containers|string||1 Images|string||1 Selector|string||1',
  'apps/daemonsets': 'Name|string|name|0 Desired|integer||0 Current|integer||0 Ready|integer||0 Up-to-date|integer||0 Available|integer||0 Node Selector|string||0 Age|string||0 Containers|string||1 Images|string||1 Selector|string||1',
  'batch/jobs': 'Name|string|name|0 Status|string||0 Completions|string||0 Duration|string||0 Age|string||0 Containers|string||1 Images|string||1 Selector|string||1',
  'batch/cronjobs': 'Name|string|name|0 Schedule|string||0 Timezone|string||0 Suspend|boolean||0 Active|integer||0 Last Schedule|string||0 Age|string||0 Containers|string||1 Images|string||1 Selector|string||1',
  '/services': 'Name|string|name|0 Type|string||0 Cluster-IP|string||0 External-IP|string||0 Port(s)|string||0 Age|string||0 Selector|string||1',
  'networking.k8s.io/ingresses': 'Name|string|name|0 Class|string||0 Hosts|string||0 Address|string||0 Ports|string||0 Age|string||0',
  'networking.k8s.io/ingressclasses': 'Name|string|name|0 Controller|string||0 Parameters|string||0 Age|string||0',
  'apps/statefulsets': 'Name|string|name|0 Ready|string||0 Age|string||0 Containers|string||1 Images|string||1',
  '/endpoints': 'Name|string|name|0 Endpoints|string||0 Age|string||0',
  '/nodes': 'Name|string|name|0 Status|string||0 Roles|string||0 Age|string||0 Version|string||0 Internal-IP|string||1 External-IP|string||1 OS-Image|string||1 Kernel-Version|string||1 Container-Runtime|string||1',
  '/events': 'Last Seen|string||0 Type|string||0 Reason|string||0 Object|string||0 Subobject|string||1 Source|string||1 Message|string||0 First Seen|string||1 Count|string||1 Name|string|name|1',
  '/namespaces': 'Name|string|name|0 Status|string||0 Age|string||0',
  '/secrets': 'Name|string|name|0 Type|string||0 Data|string||0 Age|string||0',
  '/serviceaccounts': 'Name|string|name|0 Secrets|string||0 Age|string||0',
  '/persistentvolumes': 'Name|string|name|0 Capacity|string||0 Access Modes|string||0 Reclaim Policy|string||0 Status|string||0 Claim|string||0 StorageClass|string||0 VolumeAttributesClass|string||0 Reason|string||0 Age|string||0 VolumeMode|string||1',
  '/persistentvolumeclaims': 'Name|string|name|0 Status|string||0 Volume|string||0 Capacity|string||0 Access Modes|string||0 StorageClass|string||0 VolumeAttributesClass|string||0 Age|string||0 VolumeMode|string||1',
  '/componentstatuses': 'Name|string|name|0 Status|string||0 Message|string||0 Error|string||0',
  'apps/deployments': 'Name|string|name|0 Ready|string||0 Up-to-date|string||0 Available|string||0 Age|string||0 Containers|string||1 Images|string||1 Selector|string||1',
  'autoscaling/horizontalpodautoscalers': 'Name|string|name|0 Reference|string||0 Targets|string||0 MinPods|string||0 MaxPods|string||0 Replicas|string||0 Age|string||0',
  '/configmaps': 'Name|string|name|0 Data|string||0 Age|string||0',
  'networking.k8s.io/networkpolicies': 'Name|string|name|0 Pod-Selector|string||0 Age|string||0',
  'rbac.authorization.k8s.io/rolebindings': 'Name|string|name|0 Role|string||0 Age|string||0 Users|string||1 Groups|string||1 ServiceAccounts|string||1',
  'rbac.authorization.k8s.io/clusterrolebindings': 'Name|string|name|0 Role|string||0 Age|string||0 Users|string||1 Groups|string||1 ServiceAccounts|string||1',
  'certificates.k8s.io/certificatesigningrequests': 'Name|string|name|0 Age|string||0 SignerName|string||0 Requestor|string||0 RequestedDuration|string||0 Condition|string||0',
  'coordination.k8s.io/leases': 'Name|string|name|0 Holder|string||0 Age|string||0',
  'coordination.k8s.io/leasecandidates': 'Name|string|name|0 LeaseName|string||0 BinaryVersion|string||0 EmulationVersion|string||0 Age|string||0',
  'storage.k8s.io/storageclasses': 'Name|string|name|0 Provisioner|string||0 ReclaimPolicy|string||0 VolumeBindingMode|string||0 AllowVolumeExpansion|string||0 Age|string||0',
  'storage.k8s.io/volumeattributesclasses': 'Name|string|name|0 DriverName|string||0 Age|string||0',
  'apps/controllerrevisions': 'Name|string|name|0 Controller|string||0 Revision|string||0 Age|string||0',
  '/resourcequotas': 'Name|string|name|0 Request|string||0 Limit|string||0 Age|string||0',
  'scheduling.k8s.io/priorityclasses': 'Name|string|name|0 Value|integer||0 Global-Default|boolean||0 Age|string||0 PreemptionPolicy|string||0',
  'node.k8s.io/runtimeclasses': 'Name|string|name|0 Handler|string||0 Age|string||0',
  'storage.k8s.io/volumeattachments': 'Name|string|name|0 Attacher|string|name|0 PV|string||0 Node|string||0 Attached|boolean||0 Age|string||0',
  'discovery.k8s.io/endpointslices': 'Name|string|name|0 AddressType|string||0 Ports|string||0 Endpoints|string||0 Age|string||0',
  'storage.k8s.io/csinodes': 'Name|string|name|0 Drivers|integer||0 Age|string||0',
  'storage.k8s.io/csidrivers': 'Name|string|name|0 AttachRequired|boolean||0 PodInfoOnMount|boolean||0 StorageCapacity|boolean||0 TokenRequests|string||0 RequiresRepublish|boolean||0 Modes|string||0 Age|string||0',
  'storage.k8s.io/csistoragecapacities': 'Name|string|name|0 StorageClassName|string||0 Capacity|string||0',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': 'Name|string|name|0 Webhooks|integer||0 Age|string||0',
  'admissionregistration.k8s.io/validatingwebhookconfigurations': 'Name|string|name|0 Webhooks|integer||0 Age|string||0',
  'admissionregistration.k8s.io/validatingadmissionpolicies': 'Name|string|name|0 Validations|integer||0 ParamKind|string||0 Age|string||0',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': 'Name|string|name|0 PolicyName|string||0 ParamRef|string||0 Age|string||0',
  'admissionregistration.k8s.io/mutatingadmissionpolicies': 'Name|string|name|0 Mutations|integer||0 ParamKind|string||0 Age|string||0',
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings': 'Name|string|name|0 PolicyName|string||0 ParamRef|string||0 Age|string||0',
  'flowcontrol.apiserver.k8s.io/flowschemas': 'Name|string|name|0 PriorityLevel|string||0 MatchingPrecedence|string||0 DistinguisherMethod|string||0 Age|string||0 MissingPL|string||0',
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations': 'Name|string|name|0 Type|string||0 NominalConcurrencyShares|string||0 Queues|string||0 HandSize|string||0 QueueLengthLimit|string||0 Age|string||0',
  'resource.k8s.io/deviceclasses': 'Name|string|name|0 Age|string||0',
  'resource.k8s.io/resourceclaims': 'Name|string|name|0 State|string||0 Age|string||0',
  'resource.k8s.io/resourceclaimtemplates': 'Name|string|name|0 Age|string||0',
  'resource.k8s.io/resourceslices': 'Name|string|name|0 Node|string||0 Driver|string||0 Pool|string||0 Age|string||0',
  'networking.k8s.io/servicecidrs': 'Name|string|name|0 CIDRs|string||0 Age|string||0',
  'networking.k8s.io/ipaddresses': 'Name|string|name|0 ParentRef|string||0',
}

it('prints every built-in resource with upstream printers\u2019 columns: names, types, formats and priorities in order', () => {
  const differences: string[] = []
  const seen = new Set<string>()
  for (const entry of builtinEntries(async () => ({ allowed: true }))) {
    const key = `${entry.group}/${entry.resource}`
    const expected = UPSTREAM[key]
    if (expected === undefined || seen.has(key)) continue
    seen.add(key)
    const actual = entry.columns.map((c) => `${c.name}|${c.type}|${c.format ?? ''}|${c.priority}`).join(' ')
    if (actual !== expected) differences.push(`${key}\n  upstream ${expected}\n  here     ${actual}`)
  }
  assert.deepEqual(differences, [])
  assert.deepEqual(
    Object.keys(UPSTREAM).filter((k) => !seen.has(k)),
    [],
    'every resource upstream prints is served here',
  )
})
