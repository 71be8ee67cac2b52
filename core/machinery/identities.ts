/**
 * Who the in-process controllers write as. Their writes pass admission like
 * any client's, so plugins and webhooks see the user upstream's would: the
 * API server's loopback user for what kube-apiserver does itself (bootstrap,
 * the `kubernetes` service, post-start hooks, custom resource definitions),
 * and the service account kube-controller-manager gives each controller.
 */
import type { UserInfo } from './object.js'

/** The cluster administrator: what kubectl's admin kubeconfig and an embedder's `embeddedIdentity` act as. */
export const ADMIN_IDENTITY: UserInfo = {
  username: 'system:admin',
  groups: ['system:masters', 'system:authenticated'],
}

/** Upstream's loopback client identity (user.APIServerUser in system:masters). */
export const LOOPBACK_IDENTITY: UserInfo = {
  username: 'system:apiserver',
  groups: ['system:masters', 'system:authenticated'],
}

/** The identity of a controller run with `--use-service-account-credentials`, as kube-controller-manager runs them. */
export function controllerIdentity(controller: string): UserInfo {
  return {
    username: `system:serviceaccount:kube-system:${controller}`,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
  }
}

export const NAMESPACE_CONTROLLER_IDENTITY = controllerIdentity('namespace-controller')
export const SERVICE_ACCOUNT_CONTROLLER_IDENTITY = controllerIdentity('service-account-controller')
export const GARBAGE_COLLECTOR_IDENTITY = controllerIdentity('generic-garbage-collector')
