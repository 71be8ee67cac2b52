/**
 * Request bodies captured from kubectl v1.32.4 (typed commands send protobuf,
 * kubectl-wire.md 1.4), recorded by a throwaway loopback HTTPS server.
 * Base64 of the exact bytes; each entry names the command and request.
 */

export interface CapturedBody {
  command: string
  request: string
  base64: string
}

export const kubectlBodies = {
  createNamespace: {
    command: 'kubectl create namespace team-a',
    request: 'POST /api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict',
    base64: 'azhzAAoPCgJ2MRIJTmFtZXNwYWNlEh4KFgoGdGVhbS1hEgAaACIAKgAyADgAQgASABoCCgAaACIA',
  },
  createConfigMap: {
    command: 'kubectl create configmap cfg --from-literal=a=b -n default',
    request: 'POST /api/v1/namespaces/default/configmaps?fieldManager=kubectl-create&fieldValidation=Strict',
    base64: 'azhzAAoPCgJ2MRIJQ29uZmlnTWFwEiQKGgoDY2ZnEgAaB2RlZmF1bHQiACoAMgA4AEIAEgYKAWESAWIaACIA',
  },
  createSecret: {
    command: 'kubectl create secret generic s1 --from-literal=k=v',
    request: 'POST /api/v1/namespaces/default/secrets?fieldManager=kubectl-create&fieldValidation=Strict',
    base64: 'azhzAAoMCgJ2MRIGU2VjcmV0Eh4KEgoCczESABoAIgAqADIAOABCABIGCgFrEgF2GgAaACIA',
  },
  createServiceAccount: {
    command: 'kubectl create serviceaccount builder',
    request: 'POST /api/v1/namespaces/default/serviceaccounts?fieldManager=kubectl-create&fieldValidation=Strict',
    base64: 'azhzAAoUCgJ2MRIOU2VydmljZUFjY291bnQSGQoXCgdidWlsZGVyEgAaACIAKgAyADgAQgAaACIA',
  },
  authCanICreatePods: {
    command: 'kubectl auth can-i create pods',
    request: 'POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    base64: 'azhzAAoyChdhdXRob3JpemF0aW9uLms4cy5pby92MRIXU2VsZlN1YmplY3RBY2Nlc3NSZXZpZXcSPwoQCgASABoAIgAqADIAOABCABIhCh8KB2RlZmF1bHQSBmNyZWF0ZRoAIgAqBHBvZHMyADoAGggIABIAGgAgABoAIgA=',
  },
  authWhoami: {
    command: 'kubectl auth whoami',
    request: 'POST /apis/authentication.k8s.io/v1/selfsubjectreviews',
    base64: 'azhzAAotChhhdXRoZW50aWNhdGlvbi5rOHMuaW8vdjESEVNlbGZTdWJqZWN0UmV2aWV3EhoKEAoAEgAaACIAKgAyADgAQgASBgoECgASABoAIgA=',
  },
} satisfies Record<string, CapturedBody>
