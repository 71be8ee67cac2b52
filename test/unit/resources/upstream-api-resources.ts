/**
 * What `kubectl api-resources` prints on an upstream cluster (release
 * 1.36, default API enablement), written out by hand: the yardstick for the
 * catalogue's discovery, in unit tests and against the real kubectl.
 */

/** `kubectl api-resources` of an upstream cluster: name, short names, apiVersion, namespaced, kind. */
const API_RESOURCES = `
bindings                                         v1                                true    Binding
componentstatuses                   cs           v1                                false   ComponentStatus
configmaps                          cm           v1                                true    ConfigMap
endpoints                           ep           v1                                true    Endpoints
events                              ev           v1                                true    Event
limitranges                         limits       v1                                true    LimitRange
namespaces                          ns           v1                                false   Namespace
nodes                               no           v1                                false   Node
persistentvolumeclaims              pvc          v1                                true    PersistentVolumeClaim
persistentvolumes                   pv           v1                                false   PersistentVolume
pods                                po           v1                                true    Pod
podtemplates                                     v1                                true    PodTemplate
replicationcontrollers              rc           v1                                true    ReplicationController
resourcequotas                      quota        v1                                true    ResourceQuota
secrets                                          v1                                true    Secret
serviceaccounts                     sa           v1                                true    ServiceAccount
services                            svc          v1                                true    Service
mutatingadmissionpolicies                        admissionregistration.k8s.io/v1   false   MutatingAdmissionPolicy
mutatingadmissionpolicybindings                  admissionregistration.k8s.io/v1   false   MutatingAdmissionPolicyBinding
mutatingwebhookconfigurations                    admissionregistration.k8s.io/v1   false   MutatingWebhookConfiguration
validatingadmissionpolicies                      admissionregistration.k8s.io/v1   false   ValidatingAdmissionPolicy
validatingadmissionpolicybindings                admissionregistration.k8s.io/v1   false   ValidatingAdmissionPolicyBinding
validatingwebhookconfigurations                  admissionregistration.k8s.io/v1   false   ValidatingWebhookConfiguration
customresourcedefinitions           crd,crds     apiextensions.k8s.io/v1           false   CustomResourceDefinition
apiservices                                      apiregistration.k8s.io/v1         false   APIService
controllerrevisions                              apps/v1                           true    ControllerRevision
daemonsets                          ds           apps/v1                           true    DaemonSet
deployments                         deploy       apps/v1                           true    Deployment
replicasets                         rs           apps/v1                           true    ReplicaSet
statefulsets                        sts          apps/v1                           true    StatefulSet
selfsubjectreviews                               authentication.k8s.io/v1          false   SelfSubjectReview
tokenreviews                                     authentication.k8s.io/v1          false   TokenReview
localsubjectaccessreviews                        authorization.k8s.io/v1           true    LocalSubjectAccessReview
selfsubjectaccessreviews                         authorization.k8s.io/v1           false   SelfSubjectAccessReview
selfsubjectrulesreviews                          authorization.k8s.io/v1           false   SelfSubjectRulesReview
subjectaccessreviews                             authorization.k8s.io/v1           false   SubjectAccessReview
horizontalpodautoscalers            hpa          autoscaling/v2                    true    HorizontalPodAutoscaler
cronjobs                            cj           batch/v1                          true    CronJob
jobs                                             batch/v1                          true    Job
certificatesigningrequests          csr          certificates.k8s.io/v1            false   CertificateSigningRequest
leases                                           coordination.k8s.io/v1            true    Lease
endpointslices                                   discovery.k8s.io/v1               true    EndpointSlice
events                              ev           events.k8s.io/v1                  true    Event
flowschemas                                      flowcontrol.apiserver.k8s.io/v1   false   FlowSchema
prioritylevelconfigurations                      flowcontrol.apiserver.k8s.io/v1   false   PriorityLevelConfiguration
ingressclasses                                   networking.k8s.io/v1              false   IngressClass
ingresses                           ing          networking.k8s.io/v1              true    Ingress
ipaddresses                         ip           networking.k8s.io/v1              false   IPAddress
networkpolicies                     netpol       networking.k8s.io/v1              true    NetworkPolicy
servicecidrs                                     networking.k8s.io/v1              false   ServiceCIDR
runtimeclasses                                   node.k8s.io/v1                    false   RuntimeClass
poddisruptionbudgets                pdb          policy/v1                         true    PodDisruptionBudget
clusterrolebindings                              rbac.authorization.k8s.io/v1      false   ClusterRoleBinding
clusterroles                                     rbac.authorization.k8s.io/v1      false   ClusterRole
rolebindings                                     rbac.authorization.k8s.io/v1      true    RoleBinding
roles                                            rbac.authorization.k8s.io/v1      true    Role
deviceclasses                                    resource.k8s.io/v1                false   DeviceClass
resourceclaims                                   resource.k8s.io/v1                true    ResourceClaim
resourceclaimtemplates                           resource.k8s.io/v1                true    ResourceClaimTemplate
resourceslices                                   resource.k8s.io/v1                false   ResourceSlice
priorityclasses                     pc           scheduling.k8s.io/v1              false   PriorityClass
csidrivers                                       storage.k8s.io/v1                 false   CSIDriver
csinodes                                         storage.k8s.io/v1                 false   CSINode
csistoragecapacities                             storage.k8s.io/v1                 true    CSIStorageCapacity
storageclasses                      sc           storage.k8s.io/v1                 false   StorageClass
volumeattachments                                storage.k8s.io/v1                 false   VolumeAttachment
volumeattributesclasses             vac          storage.k8s.io/v1                 false   VolumeAttributesClass
`

export interface ApiResourceRow {
  name: string
  shortNames: string
  apiVersion: string
  namespaced: string
  kind: string
}

export function upstreamApiResources(): ApiResourceRow[] {
  return API_RESOURCES.trim()
    .split('\n')
    .map((line) => {
      const parts = line.trim().split(/\s+/)
      const [name = '', ...rest] = parts
      const [shortNames, apiVersion, namespaced, kind] = rest.length === 4 ? rest : ['', ...rest]
      return { name, shortNames: shortNames ?? '', apiVersion: apiVersion ?? '', namespaced: namespaced ?? '', kind: kind ?? '' }
    })
}
