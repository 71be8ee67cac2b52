/**
 * PodSecurity on a server of its own: a namespace's enforce label refuses
 * pods with upstream's 403 message and nothing stored, its warn label
 * answers with Warning headers (pods and workload templates alike, a
 * template never refused), invalid labels are 422, tightening enforce
 * warns about the pods already there, and the configuration's defaults and
 * exemptions apply.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AuditBackend, AuditEvent } from '../../core/audit/types.js'
import type { ApiServerOptions } from '../../core/index.js'
import { eventually, startServer, type TestClient } from './harness.js'

const NS = '/api/v1/namespaces/team'

async function serverWithNamespace(labels: Record<string, string>, options: ApiServerOptions = {}): Promise<TestClient> {
  const api = await startServer({ garbageCollector: false, allowPrivileged: true, admission: { plugins: ['PodSecurity'] }, ...options })
  assert.equal((await api.post('/api/v1/namespaces', { metadata: { name: 'team', labels } })).status, 201)
  return api
}

const pod = (name: string, container: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx', ...container }], ...spec },
})

const RESTRICTED_CONTAINER = {
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
}

const warningsOf = (headers: Headers): string[] => (headers.get('warning') ?? '').split(/,\s*(?=299 )/).filter(Boolean)

describe('PodSecurity admission', () => {
  it('refuses a pod that violates the enforced level, with the failed checks in order, and stores nothing', async () => {
    const api = await serverWithNamespace({ 'pod-security.kubernetes.io/enforce': 'restricted' })
    const res = await api.post(`${NS}/pods`, pod('plain'))
    assert.equal(res.status, 403)
    assert.equal(res.body.reason, 'Forbidden')
    assert.equal(
      res.body.message,
      'pods "plain" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    )
    assert.equal((await api.get(`${NS}/pods/plain`)).status, 404)
    assert.equal((await api.post(`${NS}/pods`, pod('good', RESTRICTED_CONTAINER))).status, 201)
  })

  it('holds baseline to host namespaces, privileged containers and host ports', async () => {
    const api = await serverWithNamespace({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.32' })
    const res = await api.post(
      `${NS}/pods`,
      pod('host', { securityContext: { privileged: true }, ports: [{ containerPort: 80, hostPort: 8080 }] }, { hostNetwork: true, hostPID: true }),
    )
    assert.equal(res.status, 403)
    assert.equal(
      res.body.message,
      'pods "host" is forbidden: violates PodSecurity "baseline:v1.32": host namespaces (hostNetwork=true, hostPID=true), hostPort (container "c" uses hostPort 8080), privileged (container "c" must not set securityContext.privileged=true)',
    )
    assert.equal((await api.post(`${NS}/pods`, pod('plain'))).status, 201)
  })

  it('warns for pods and workload templates under the warn level without refusing them', async () => {
    const api = await serverWithNamespace({ 'pod-security.kubernetes.io/warn': 'baseline' })
    const res = await api.post(`${NS}/pods`, pod('priv', { securityContext: { privileged: true } }))
    assert.equal(res.status, 201)
    assert.deepEqual(warningsOf(res.headers), [
      '299 - "would violate PodSecurity \\"baseline:latest\\": privileged (container \\"c\\" must not set securityContext.privileged=true)"',
    ])
    const deployment = {
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: pod('x', {}, { hostIPC: true }).spec },
      },
    }
    const created = await api.post('/apis/apps/v1/namespaces/team/deployments', deployment)
    assert.equal(created.status, 201)
    assert.match(created.headers.get('warning') ?? '', /would violate PodSecurity \\"baseline:latest\\": host namespaces \(hostIPC=true\)/)
  })

  it('refuses invalid labels with 422 and warns about existing pods when enforce tightens', async () => {
    const api = await serverWithNamespace({})
    const bad = await api.post('/api/v1/namespaces', { metadata: { name: 'bad', labels: { 'pod-security.kubernetes.io/enforce': 'strict' } } })
    assert.equal(bad.status, 422)
    assert.equal(bad.body.reason, 'Invalid')
    assert.equal(
      bad.body.message,
      'namespaces "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    )
    assert.equal((await api.get('/api/v1/namespaces/bad')).status, 404)

    for (const name of ['a', 'b']) assert.equal((await api.post(`${NS}/pods`, pod(name))).status, 201)
    const labelled = await api.patch(NS, { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } }, 'application/merge-patch+json')
    assert.equal(labelled.status, 200)
    const warnings = warningsOf(labelled.headers)
    assert.equal(warnings.length, 2)
    assert.match(warnings[0] ?? '', /existing pods in namespace \\"team\\" violate the new PodSecurity enforce level \\"restricted:latest\\"/)
    assert.match(warnings[1] ?? '', /a \(and 1 other pod\): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile/)
    // The label took: the next plain pod is refused.
    await eventually('the new level is enforced', async () => (await api.post(`${NS}/pods`, pod('c'))).status === 403)
  })

  it('records the audit level\'s violations and the enforced policy as audit annotations', async () => {
    const events: AuditEvent[] = []
    const kept: AuditBackend = { name: 'kept', processEvents: async (batch) => void events.push(...batch) }
    const api = await serverWithNamespace(
      { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/audit': 'restricted' },
      { audit: { policy: { omitStages: ['RequestReceived'], rules: [{ level: 'Metadata' }] }, backends: [kept] } },
    )
    const res = await api.post(`${NS}/pods`, pod('audited', RESTRICTED_CONTAINER, { securityContext: { runAsNonRoot: false } }))
    assert.equal(res.status, 201)
    const id = res.headers.get('audit-id')
    await eventually('the event is recorded', async () => events.some((e) => e.auditID === id && e.stage === 'ResponseComplete'))
    const annotations = events.find((e) => e.auditID === id && e.stage === 'ResponseComplete')?.annotations ?? {}
    assert.equal(annotations['pod-security.kubernetes.io/enforce-policy'], 'baseline:latest')
    assert.equal(
      annotations['pod-security.kubernetes.io/audit-violations'],
      'would violate PodSecurity "restricted:latest": runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)',
    )
  })

  it('applies the configured defaults and passes exempt users and namespaces', async () => {
    const configuration = {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline' },
      exemptions: { namespaces: ['exempt'], usernames: ['system:admin'] },
    }
    const api = await serverWithNamespace({}, { admission: { plugins: ['PodSecurity'], configurations: { PodSecurity: configuration } } })
    // The embedded identity of the test server is the exempt administrator: it passes.
    assert.equal((await api.post(`${NS}/pods`, pod('admin', { securityContext: { privileged: true } }))).status, 201)
  })

  it('stops start-up on an invalid configuration, naming the field', async () => {
    const configuration = { apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', defaults: { enforce: 'strict' } }
    await assert.rejects(
      () => startServer({ admission: { plugins: ['PodSecurity'], configurations: { PodSecurity: configuration } } }),
      /defaults\.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted/,
    )
  })
})
