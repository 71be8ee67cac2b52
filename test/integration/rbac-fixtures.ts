/** Users, objects and helpers shared by the RBAC tests that drive a server through `fetch`. */
import { ADMIN_IDENTITY } from '../../core/index.js'
import { eventually, startServer, type TestClient } from './harness.js'

export const RBAC = '/apis/rbac.authorization.k8s.io/v1'
export const GROUP = 'rbac.authorization.k8s.io'

export const tokens = [
  { token: 'alice-token', user: { username: 'alice', groups: ['dev'] } },
  { token: 'bob-token', user: { username: 'bob', groups: ['ops'] } },
  { token: 'carol-token', user: { username: 'carol', groups: ['qa'] } },
  { token: 'root-token', user: { username: 'root', groups: ['system:masters'] } },
  {
    token: 'builder-token',
    user: { username: 'system:serviceaccount:team-a:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a'] },
  },
]

export type Who = 'alice' | 'bob' | 'carol' | 'root' | 'builder'

/** Call options that authenticate as one of the token users (a connection, so the embedded identity is not used). */
export const as = (who: Who) => ({ connection: {}, headers: { authorization: `Bearer ${who}-token` } })

/** A server under `--authorization-mode=RBAC` (or `modes`), with the namespaces the tests use. */
/* The default policy stays out: these tests grant each permission themselves and check its absence. */
export async function rbacServer(modes: string[] = ['RBAC']): Promise<TestClient> {
  const api = await startServer({ authentication: { tokens }, authorizationModes: modes, embeddedIdentity: ADMIN_IDENTITY, bootstrapRbacPolicy: false })
  for (const name of ['team-a', 'team-b']) await api.post('/api/v1/namespaces', { metadata: { name } })
  return api
}

export interface Rule {
  verbs: string[]
  apiGroups?: string[]
  resources?: string[]
  resourceNames?: string[]
  nonResourceURLs?: string[]
}

export const role = (name: string, rules: Rule[]) => ({ metadata: { name }, rules })

export const subject = (kind: 'User' | 'Group' | 'ServiceAccount', name: string, namespace?: string) =>
  kind === 'ServiceAccount' ? { kind, name, ...(namespace ? { namespace } : {}) } : { kind, name, apiGroup: GROUP }

export const binding = (name: string, roleRef: { kind: 'Role' | 'ClusterRole'; name: string }, subjects: ReturnType<typeof subject>[]) => ({
  metadata: { name },
  roleRef: { apiGroup: GROUP, ...roleRef },
  subjects,
})

/** Creates an object as the administrator; fails the test if the server refuses. */
export async function adminCreate(api: TestClient, path: string, body: unknown): Promise<void> {
  const r = await api.post(path, body)
  if (r.status !== 201) throw new Error(`creating at ${path}: ${r.status} ${r.text}`)
}

/** What a SubjectAccessReview asks for `who`, as the administrator. */
export async function review(api: TestClient, who: Who, attributes: Record<string, unknown>): Promise<{ allowed: boolean; reason?: string }> {
  const user = tokens.find((t) => t.token === `${who}-token`)!.user
  const kind = 'verb' in attributes && 'path' in attributes ? 'nonResourceAttributes' : 'resourceAttributes'
  const r = await api.post('/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { user: user.username, groups: user.groups, [kind]: attributes } })
  if (r.status !== 201) throw new Error(`review: ${r.status} ${r.text}`)
  return r.body.status
}

/** Waits until the RBAC index has seen a grant: the review of `attributes` for `who` is allowed. */
export async function untilAllowed(api: TestClient, who: Who, attributes: Record<string, unknown>): Promise<void> {
  await eventually(`${who} may ${JSON.stringify(attributes)}`, async () => (await review(api, who, attributes)).allowed)
}

/** The attributes of a request the first rule allows, to see when a grant took effect. */
function probeOf(rules: Rule[], namespace: string | undefined): Record<string, unknown> {
  const rule = rules[0]!
  const verb = rule.verbs[0]
  if (rule.nonResourceURLs) return { verb, path: rule.nonResourceURLs[0]!.replace(/\*$/, 'x') }
  const out: Record<string, unknown> = { verb, group: rule.apiGroups?.[0], resource: rule.resources?.[0] }
  if (rule.resourceNames) out['name'] = rule.resourceNames[0]
  if (namespace) out['namespace'] = namespace
  return out
}

/** Grants `who` the rules in namespace `ns` (or cluster-wide without one) and waits until the grant is seen. */
export async function grant(api: TestClient, who: Who, name: string, rules: Rule[], ns?: string): Promise<void> {
  const user = subject('User', who)
  if (ns) {
    await adminCreate(api, `${RBAC}/namespaces/${ns}/roles`, role(name, rules))
    await adminCreate(api, `${RBAC}/namespaces/${ns}/rolebindings`, binding(name, { kind: 'Role', name }, [user]))
  } else {
    await adminCreate(api, `${RBAC}/clusterroles`, role(name, rules))
    await adminCreate(api, `${RBAC}/clusterrolebindings`, binding(name, { kind: 'ClusterRole', name }, [user]))
  }
  await untilAllowed(api, who, probeOf(rules, ns))
}
