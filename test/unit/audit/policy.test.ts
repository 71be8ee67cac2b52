import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { legacyEventLine } from '../../../core/audit/event.js'
import { PolicyChecker } from '../../../core/audit/policy.js'
import type { AuditEvent } from '../../../core/audit/types.js'
import { loadAuditPolicy } from '../../../core/config/audit-policy.js'
import { ConfigFileError } from '../../../core/config/decode.js'

const attrs = (over: Partial<Parameters<PolicyChecker['decide']>[0]> = {}) => ({
  user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  path: '/api/v1/namespaces/a/pods/p/log',
  namespace: 'a',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: 'log',
  name: 'p',
  ...over,
})

describe('audit policy', () => {
  it('takes the first rule that matches, as upstream, and None when none does', () => {
    const checker = new PolicyChecker(
      loadAuditPolicy(
        `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: [bob]
- level: Request
  userGroups: [dev]
  resources: [{group: "", resources: ["pods/log"]}]
  omitStages: [ResponseStarted]
- level: Metadata
  resources: [{group: "", resources: ["*/status"]}]
- level: RequestResponse
  nonResourceURLs: ["/metrics*"]
`,
        'policy.yaml',
      ),
    )
    const logs = checker.decide(attrs())
    assert.equal(logs.level, 'Request')
    assert.deepEqual([...logs.omitStages].sort(), ['RequestReceived', 'ResponseStarted'])
    assert.equal(checker.decide(attrs({ user: { username: 'bob', groups: ['dev'] } })).level, 'None')
    assert.equal(checker.decide(attrs({ subresource: 'status', resource: 'nodes' })).level, 'Metadata')
    assert.equal(checker.decide(attrs({ isResourceRequest: false, path: '/metrics/slis', resource: '', subresource: '' })).level, 'RequestResponse')
    assert.equal(checker.decide(attrs({ subresource: '' })).level, 'None')
  })

  it('refuses a policy upstream refuses, naming each field', () => {
    const text = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Loud
- level: Metadata
  nonResourceURLs: ["metrics", "/a*b"]
  resources: [{group: "", resources: [pods]}]
- omitStages: [Sometime]
`
    assert.throws(
      () => loadAuditPolicy(text, 'policy.yaml'),
      (err: ConfigFileError) =>
        err instanceof ConfigFileError &&
        /rules\[0\]\.level: Unsupported value: "Loud"/.test(err.message) &&
        /rules\[1\]\.nonResourceURLs\[0\]: Invalid value: "metrics": non-resource URL rules must begin with a '\/' character/.test(err.message) &&
        /rules\[1\]\.nonResourceURLs\[1\]: Invalid value: "\/a\*b"/.test(err.message) &&
        /rules cannot apply to both regular resources and non-resource URLs/.test(err.message) &&
        /rules\[2\]\.level: Required value/.test(err.message) &&
        /rules\[2\]\.omitStages\[0\]: Invalid value: "Sometime"/.test(err.message),
    )
    assert.throws(() => loadAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n', 'p.yaml'), /0 rules/)
  })
})

describe('the legacy log line', () => {
  it('reads as upstream writes it', () => {
    const ev: AuditEvent = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'Metadata',
      auditID: 'id-1',
      stage: 'ResponseComplete',
      requestURI: '/api/v1/namespaces/a/pods',
      verb: 'list',
      user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
      sourceIPs: ['127.0.0.1'],
      userAgent: 'kubectl/v1.32.0',
      objectRef: { resource: 'pods', namespace: 'a', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 200 },
      requestReceivedTimestamp: '2026-11-23T10:00:00.120000Z',
      stageTimestamp: '2026-11-23T10:00:00.130000Z',
    }
    assert.equal(
      legacyEventLine(ev),
      '2026-11-23T10:00:00.12Z AUDIT: id="id-1" stage="ResponseComplete" ip="127.0.0.1" method="list" user="alice" ' +
        'groups="\\"dev\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.32.0" namespace="a" ' +
        'uri="/api/v1/namespaces/a/pods" response="200"',
    )
  })
})
