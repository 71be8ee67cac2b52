/**
 * The AuthorizationConfiguration file: for each rule, the exact line a user
 * sees for a failing file, and a file that passes.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { evaluate } from '../../../core/cel/evaluate.js'
import { type AuthorizationLoadOptions, loadAuthorizationConfiguration } from '../../../core/config/authorization.js'
import { ConfigFileError } from '../../../core/config/decode.js'

type Section = Record<string, unknown>

const GOOD_WEBHOOK = {
  timeout: '3s',
  subjectAccessReviewVersion: 'v1',
  matchConditionSubjectAccessReviewVersion: 'v1',
  failurePolicy: 'NoOpinion',
  connectionInfo: { type: 'KubeConfigFile', platformConfigFile: '/etc/platform/authz-webhook.kubeconfig' },
  matchConditions: [{ expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'" }],
}

const webhook = (w: Section = {}, name = 'webhook') => ({ type: 'Webhook', name, webhook: { ...GOOD_WEBHOOK, ...w } })

function authzFile(authorizers: unknown[], apiVersion = 'apiserver.config.k8s.io/v1'): string {
  return JSON.stringify({ apiVersion, kind: 'AuthorizationConfiguration', authorizers })
}

function problems(text: string, options: AuthorizationLoadOptions = {}): string[] {
  try {
    loadAuthorizationConfiguration(text, 'authz.yaml', options)
  } catch (err) {
    assert.ok(err instanceof ConfigFileError, String(err))
    return err.message.split('\n').slice(1).map((line) => line.trim())
  }
  return []
}

interface Case {
  rule: string
  bad: unknown[]
  message: string | string[]
  good: unknown[]
}

function runCases(cases: Case[]): void {
  for (const c of cases) {
    it(c.rule, () => {
      assert.deepEqual(problems(authzFile(c.bad)), [c.message].flat())
      assert.deepEqual(problems(authzFile(c.good)), [])
    })
  }
}

describe('an AuthorizationConfiguration file', () => {
  it('is read in every apiVersion upstream reads', () => {
    for (const v of ['v1', 'v1beta1', 'v1alpha1']) {
      assert.deepEqual(problems(authzFile([webhook()], `apiserver.config.k8s.io/${v}`)), [], v)
    }
  })

  it('refuses unknown fields, naming each', () => {
    assert.deepEqual(problems(authzFile([{ type: 'RBAC', name: 'rbac', mode: 'x' }, webhook({ retries: 3 })])), [
      'unknown field "authorizers[0].mode"',
      'unknown field "authorizers[1].webhook.retries"',
    ])
  })

  it('lists every problem of the file at once, under its name', () => {
    const text = authzFile([{ type: 'RBAC' }, webhook({ timeout: '1m' })])
    assert.throws(() => loadAuthorizationConfiguration(text, '/etc/platform/authz.yaml'), {
      message: [
        '/etc/platform/authz.yaml: invalid AuthorizationConfiguration:',
        '  authorizers[0].name: Required value',
        '  authorizers[1].webhook.timeout: Invalid value: "1m0s": must be > 0s and <= 30s',
      ].join('\n'),
    })
  })

  it('hands over each webhook with its compiled match conditions, and the defaults filled in', () => {
    const loaded = loadAuthorizationConfiguration(authzFile([{ type: 'Node', name: 'node' }, webhook()]), 'authz.yaml')
    const [node, hook] = loaded.authorizers
    assert.deepEqual(node, { type: 'Node', name: 'node', matchConditionPrograms: [] })
    assert.ok(hook?.webhook)
    assert.equal(hook.webhook.authorizedTTL, 300_000)
    assert.equal(hook.webhook.unauthorizedTTL, 30_000)
    assert.equal(hook.webhook.timeout, 3_000)
    assert.equal(hook.webhook.cacheAuthorizedRequests, true)
    assert.equal(hook.webhook.cacheUnauthorizedRequests, true)
    const [condition] = hook.matchConditionPrograms
    assert.ok(condition)
    assert.equal(evaluate(condition, { user: 'a', resourceAttributes: { namespace: 'kube-system', verb: 'get' } }), true)
    assert.equal(evaluate(condition, { user: 'a', nonResourceAttributes: { path: '/healthz', verb: 'get' } }), false)
  })
})

describe('the authorizer list', () => {
  runCases([
    {
      rule: 'has at least one authorizer',
      bad: [],
      message: 'authorizers: Required value: at least one authorization mode must be defined',
      good: [{ type: 'AlwaysAllow', name: 'alwaysallow' }],
    },
    {
      rule: 'gives each authorizer a type',
      bad: [{ name: 'rbac' }],
      message: 'authorizers[0].type: Required value',
      good: [{ type: 'RBAC', name: 'rbac' }],
    },
    {
      rule: 'uses the types the server knows',
      bad: [{ type: 'Fancy', name: 'fancy' }],
      message: 'authorizers[0].type: Unsupported value: "Fancy": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"',
      good: [{ type: 'ABAC', name: 'abac' }, { type: 'AlwaysDeny', name: 'alwaysdeny' }],
    },
    {
      rule: 'lists a built-in type once, and webhooks as often as wanted',
      bad: [{ type: 'RBAC', name: 'rbac' }, { type: 'RBAC', name: 'rbac2' }],
      message: 'authorizers[1].type: Duplicate value: "RBAC"',
      good: [webhook({}, 'first'), { type: 'RBAC', name: 'rbac' }, webhook({}, 'second')],
    },
    {
      rule: 'names each authorizer',
      bad: [{ type: 'Node' }],
      message: 'authorizers[0].name: Required value',
      good: [{ type: 'Node', name: 'node' }],
    },
    {
      rule: 'names each authorizer once',
      bad: [webhook({}, 'policy'), webhook({}, 'policy')],
      message: 'authorizers[1].name: Duplicate value: "policy"',
      good: [webhook({}, 'policy'), webhook({}, 'policy.example.com')],
    },
    {
      rule: 'names authorizers as DNS subdomains',
      bad: [webhook({}, 'My_Webhook')],
      message:
        "authorizers[0].name: Invalid value: \"My_Webhook\": authorizer name is invalid: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      good: [webhook({}, 'my-webhook')],
    },
    {
      rule: 'names a built-in authorizer after its type',
      bad: [{ type: 'RBAC', name: 'roles' }],
      message: 'authorizers[0].name: Invalid value: "roles": expected name rbac for authorizer RBAC',
      good: [{ type: 'RBAC', name: 'rbac' }],
    },
    {
      rule: 'configures a webhook for type Webhook',
      bad: [{ type: 'Webhook', name: 'policy' }],
      message: 'authorizers[0].webhook: Required value: required when type=Webhook',
      good: [webhook({}, 'policy')],
    },
    {
      rule: 'configures a webhook for type Webhook only',
      bad: [{ type: 'Node', name: 'node', webhook: GOOD_WEBHOOK }],
      message: 'authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook',
      good: [{ type: 'Node', name: 'node', webhook: null }],
    },
  ])
})

describe('a webhook authorizer', () => {
  runCases([
    {
      rule: 'has a timeout',
      bad: [webhook({ timeout: null })],
      message: 'authorizers[0].webhook.timeout: Required value',
      good: [webhook({ timeout: '30s' })],
    },
    {
      rule: 'times out within 30 seconds',
      bad: [webhook({ timeout: '30.5s' })],
      message: 'authorizers[0].webhook.timeout: Invalid value: "30.5s": must be > 0s and <= 30s',
      good: [webhook({ timeout: '500ms' })],
    },
    {
      rule: 'has no negative timeout',
      bad: [webhook({ timeout: '-1s' })],
      message: 'authorizers[0].webhook.timeout: Invalid value: "-1s": must be > 0s and <= 30s',
      good: [webhook({ timeout: '1s' })],
    },
    {
      rule: 'writes durations as Go does',
      bad: [webhook({ timeout: 'soon' })],
      message: 'authorizers[0].webhook.timeout: Invalid value: "soon": time: invalid duration "soon"',
      good: [webhook({ timeout: '0.5m', authorizedTTL: '1h30m', unauthorizedTTL: '10s' })],
    },
    {
      rule: 'caches authorized answers for a positive time',
      bad: [webhook({ authorizedTTL: '-5m' })],
      message: 'authorizers[0].webhook.authorizedTTL: Invalid value: "-5m0s": must be > 0s',
      good: [webhook({ authorizedTTL: '5m', cacheAuthorizedRequests: false })],
    },
    {
      rule: 'caches unauthorized answers for a positive time',
      bad: [webhook({ unauthorizedTTL: '-30s' })],
      message: 'authorizers[0].webhook.unauthorizedTTL: Invalid value: "-30s": must be > 0s',
      good: [webhook({ unauthorizedTTL: '30s', cacheUnauthorizedRequests: false })],
    },
    {
      rule: 'names the SubjectAccessReview version it sends',
      bad: [webhook({ subjectAccessReviewVersion: '' })],
      message: 'authorizers[0].webhook.subjectAccessReviewVersion: Required value',
      good: [webhook({ subjectAccessReviewVersion: 'v1beta1' })],
    },
    {
      rule: 'sends a SubjectAccessReview version that exists',
      bad: [webhook({ subjectAccessReviewVersion: 'v2' })],
      message: 'authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"',
      good: [webhook({ subjectAccessReviewVersion: 'v1' })],
    },
    {
      rule: 'names the version its match conditions see',
      bad: [webhook({ matchConditionSubjectAccessReviewVersion: null })],
      message: 'authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified',
      good: [webhook({ matchConditionSubjectAccessReviewVersion: null, matchConditions: [] })],
    },
    {
      rule: 'evaluates match conditions against v1 only',
      bad: [webhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' })],
      message: 'authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: "v1"',
      good: [webhook({ matchConditionSubjectAccessReviewVersion: 'v1' })],
    },
    {
      rule: 'has a failure policy',
      bad: [webhook({ failurePolicy: '' })],
      message: 'authorizers[0].webhook.failurePolicy: Required value',
      good: [webhook({ failurePolicy: 'Deny' })],
    },
    {
      rule: 'fails with NoOpinion or Deny',
      bad: [webhook({ failurePolicy: 'Allow' })],
      message: 'authorizers[0].webhook.failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"',
      good: [webhook({ failurePolicy: 'NoOpinion' })],
    },
  ])
})

describe('a webhook connection', () => {
  const connection = (connectionInfo: Section) => [webhook({ connectionInfo })]

  runCases([
    {
      rule: 'has a type',
      bad: connection({}),
      message: 'authorizers[0].webhook.connectionInfo.type: Required value',
      good: connection({ type: 'InClusterConfig' }),
    },
    {
      rule: 'is KubeConfigFile or InClusterConfig',
      bad: connection({ type: 'Direct' }),
      message: 'authorizers[0].webhook.connectionInfo.type: Unsupported value: "Direct": supported values: "InClusterConfig", "KubeConfigFile"',
      good: connection({ type: 'KubeConfigFile', platformConfigFile: '/etc/platform/webhook.kubeconfig' }),
    },
    {
      rule: 'names a connection-config file for type KubeConfigFile',
      bad: connection({ type: 'KubeConfigFile' }),
      message: 'authorizers[0].webhook.connectionInfo.platformConfigFile: Required value',
      good: connection({ type: 'KubeConfigFile', kubeConfigFile: '/etc/kubernetes/webhook.kubeconfig' }),
    },
    {
      rule: 'names the file by an absolute path',
      bad: connection({ type: 'KubeConfigFile', kubeConfigFile: 'webhook.kubeconfig' }),
      message: 'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "webhook.kubeconfig": must be an absolute path',
      good: connection({ type: 'KubeConfigFile', kubeConfigFile: '/webhook.kubeconfig' }),
    },
    {
      rule: 'names a file only for type KubeConfigFile',
      bad: connection({ type: 'InClusterConfig', platformConfigFile: '/etc/x' }),
      message: 'authorizers[0].webhook.connectionInfo.platformConfigFile: Invalid value: "/etc/x": can only be set when type=KubeConfigFile',
      good: connection({ type: 'InClusterConfig' }),
    },
    {
      rule: 'names the file under one of its two names',
      bad: connection({ type: 'KubeConfigFile', platformConfigFile: '/a', kubeConfigFile: '/a' }),
      message: 'authorizers[0].webhook.connectionInfo.kubeConfigFile: Forbidden: may not be set together with platformConfigFile (the same field)',
      good: connection({ type: 'KubeConfigFile', platformConfigFile: '/a' }),
    },
  ])

  it('names a file the runtime can read', () => {
    const check = (path: string) =>
      path === '/missing' ? 'error loading file: stat /missing: no such file or directory' : path === '/etc' ? 'must be a regular file' : undefined
    const file = (p: string) => authzFile(connection({ type: 'KubeConfigFile', platformConfigFile: p }))
    assert.deepEqual(problems(file('/missing'), { checkConnectionFile: check }), [
      'authorizers[0].webhook.connectionInfo.platformConfigFile: Invalid value: "/missing": error loading file: stat /missing: no such file or directory',
    ])
    assert.deepEqual(problems(file('/etc'), { checkConnectionFile: check }), [
      'authorizers[0].webhook.connectionInfo.platformConfigFile: Invalid value: "/etc": must be a regular file',
    ])
    assert.deepEqual(problems(file('/etc/webhook.kubeconfig'), { checkConnectionFile: check }), [])
  })
})

describe('webhook match conditions', () => {
  const conditions = (...expressions: string[]) => [webhook({ matchConditions: expressions.map((expression) => ({ expression })) })]

  runCases([
    {
      rule: 'are not empty',
      bad: conditions('  '),
      message: 'authorizers[0].webhook.matchConditions[0].expression: Required value',
      good: conditions("request.user != 'system:anonymous'"),
    },
    {
      rule: 'state each expression once',
      bad: conditions("request.user == 'a'", "request.user == 'a'"),
      message: `authorizers[0].webhook.matchConditions[1].expression: Duplicate value: "request.user == 'a'"`,
      good: conditions("request.user == 'a'", "'dev' in request.groups"),
    },
    {
      rule: 'compile at load time',
      bad: conditions("request.user == 'a' &&"),
      message: [`authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.user == 'a' &&": compilation failed: ERROR: <input>:1:23: Unexpected token: EOF`, `| request.user == 'a' &&`, `| ......................^`],
      good: conditions("request.user == 'a' && request.uid != ''"),
    },
    {
      rule: 'see the SubjectAccessReview as request',
      bad: conditions("request.resourceAttributes.namespaces == 'a'"),
      message: [`authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.resourceAttributes.namespaces == 'a'": compilation failed: ERROR: <input>:1:27: undefined field 'namespaces'`, `| request.resourceAttributes.namespaces == 'a'`, `| ..........................^`],
      good: conditions("has(request.nonResourceAttributes) && request.nonResourceAttributes.path == '/healthz'"),
    },
    {
      rule: 'evaluate to bool',
      bad: conditions('request.groups'),
      message: 'authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.groups": must evaluate to bool but got list(string)',
      good: conditions('size(request.groups) > 0'),
    },
  ])

  it('number at most 64', () => {
    const many = Array.from({ length: 65 }, (_, i) => `request.user != 'user${i}'`)
    assert.deepEqual(problems(authzFile(conditions(...many))), ['authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items'])
    assert.deepEqual(problems(authzFile(conditions(...many.slice(0, 64)))), [])
  })
})
