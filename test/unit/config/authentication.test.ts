/**
 * The AuthenticationConfiguration file as a whole: versions, unknown
 * fields, several authenticators, anonymous authentication, the compiled
 * programs it hands over, and its conflicts with flags.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { evaluate } from '../../../core/cel/evaluate.js'
import { authenticationFlagConflicts, loadAuthenticationConfiguration } from '../../../core/config/authentication.js'
import { authnFile, authnProblems, jwt } from '../../fixtures/config/authn-files.js'

const issuer = (url: string, discoveryURL?: string) => jwt({ issuer: { url, ...(discoveryURL ? { discoveryURL } : {}) } })

describe('an AuthenticationConfiguration file', () => {
  it('is read in every apiVersion upstream reads, as YAML or JSON', () => {
    for (const v of ['v1', 'v1beta1', 'v1alpha1']) {
      assert.deepEqual(authnProblems(authnFile({ jwt: [jwt()] }, `apiserver.config.k8s.io/${v}`)), [], v)
    }
    const yaml = [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AuthenticationConfiguration',
      'jwt:',
      '- issuer:',
      '    url: https://issuer.example.com',
      '    audiences: [api]',
      '  claimMappings:',
      '    username: {claim: sub, prefix: "oidc:"}',
    ].join('\n')
    const loaded = loadAuthenticationConfiguration(yaml, 'authn.yaml')
    assert.equal(loaded.jwt[0]?.claimMappings.username.prefix, 'oidc:')
    assert.deepEqual(authnProblems(authnFile({ jwt: [] }, 'apiserver.config.k8s.io/v2')), [
      'apiVersion: Unsupported value: "apiserver.config.k8s.io/v2": supported values: "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1alpha1"',
    ])
  })

  it('refuses unknown fields, naming each', () => {
    const text = authnFile({ jwt: [{ ...jwt(), issuer: { url: 'https://issuer.example.com', audiences: ['api'], audience: 'x' } }], oidc: {} })
    assert.deepEqual(authnProblems(text), ['unknown field "jwt[0].issuer.audience"', 'unknown field "oidc"'])
  })

  it('lists every problem of the file at once, under its name', () => {
    const text = authnFile({ jwt: [jwt({ issuer: { url: 'http://x' }, claimMappings: { username: { claim: 'sub' } } })] })
    assert.throws(
      () => loadAuthenticationConfiguration(text, '/etc/platform/authn.yaml'),
      {
        message: [
          '/etc/platform/authn.yaml: invalid AuthenticationConfiguration:',
          '  jwt[0].issuer.url: Invalid value: "http://x": URL scheme must be https',
          '  jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
        ].join('\n'),
      },
    )
  })

  it('accepts no authenticator at all, and at most 64', () => {
    assert.deepEqual(authnProblems(authnFile({})), [])
    const many = Array.from({ length: 65 }, (_, i) => issuer(`https://issuer${i}.example.com`))
    assert.deepEqual(authnProblems(authnFile({ jwt: many })), ['jwt: Too many: 65: must have at most 64 items'])
    assert.deepEqual(authnProblems(authnFile({ jwt: many.slice(0, 64) })), [])
  })

  it('gives each authenticator its own issuer url and discoveryURL', () => {
    assert.deepEqual(authnProblems(authnFile({ jwt: [issuer('https://a.example.com'), issuer('https://a.example.com')] })), [
      'jwt[1].issuer.url: Duplicate value: "https://a.example.com"',
    ])
    const d = 'https://oidc.local/.well-known/openid-configuration'
    assert.deepEqual(authnProblems(authnFile({ jwt: [issuer('https://a.example.com', d), issuer('https://b.example.com', d)] })), [
      'jwt[1].issuer.discoveryURL: Duplicate value: "https://oidc.local/.well-known/openid-configuration"',
    ])
    assert.deepEqual(authnProblems(authnFile({ jwt: [issuer('https://a.example.com', d), issuer('https://b.example.com')] })), [])
  })

  it('hands over each authenticator with its compiled expressions', () => {
    const text = authnFile({
      jwt: [
        jwt({
          claimMappings: {
            username: { expression: "'oidc:' + claims.sub" },
            groups: { expression: 'claims.groups' },
            uid: { claim: 'sub' },
            extra: [{ key: 'acme.io/tenant', valueExpression: 'claims.tenant' }],
          },
          claimValidationRules: [{ claim: 'hd', requiredValue: 'example.com' }, { expression: 'claims.exp > 0', message: 'expired' }],
          userValidationRules: [{ expression: "!user.username.startsWith('system:')", message: 'no system users' }],
        }),
      ],
    })
    const [a] = loadAuthenticationConfiguration(text, 'authn.yaml').jwt
    assert.ok(a)
    const claims = { sub: 'alice', groups: ['dev'], tenant: 't1', exp: 100 }
    assert.ok(a.programs.username && a.programs.groups)
    assert.equal(evaluate(a.programs.username, claims), 'oidc:alice')
    assert.deepEqual(evaluate(a.programs.groups, claims), ['dev'])
    assert.equal(a.programs.uid, undefined, 'a uid taken from a claim needs no program')
    assert.deepEqual(a.programs.extra.map((e) => [e.key, evaluate(e.program, claims)]), [['acme.io/tenant', 't1']])
    assert.deepEqual(a.programs.claimValidationRules.map((r) => [r.message, evaluate(r.program, claims)]), [['expired', true]])
    const [rule] = a.programs.userValidationRules
    assert.ok(rule)
    assert.equal(rule.message, 'no system users')
    assert.equal(evaluate(rule.program, { username: 'system:admin' }), false)
  })
})

describe('anonymous authentication in the file', () => {
  const anonymous = (value: unknown) => authnProblems(authnFile({ anonymous: value }))

  it('may be the only thing the file configures', () => {
    assert.deepEqual(anonymous({ enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }] }), [])
    assert.deepEqual(anonymous({ enabled: false }), [])
    assert.equal(loadAuthenticationConfiguration(authnFile({ anonymous: { enabled: true } }), 'x').anonymous?.enabled, true)
  })

  it('is enabled when it has conditions', () => {
    assert.deepEqual(anonymous({ conditions: [{ path: '/livez' }] }), [
      'anonymous.conditions: Invalid value: [{"path":"/livez"}]: enabled should be set to true when conditions are defined',
    ])
  })

  it('names each condition path once, and not empty', () => {
    assert.deepEqual(anonymous({ enabled: true, conditions: [{ path: '/livez' }, { path: '/livez' }] }), [
      'anonymous.conditions[1].path: Duplicate value: "/livez"',
    ])
    assert.deepEqual(anonymous({ enabled: true, conditions: [{}] }), ['anonymous.conditions[0].path: Required value'])
  })

  it('refuses unknown and mistyped fields', () => {
    assert.deepEqual(anonymous({ enabled: 'yes', paths: [] }), [
      'anonymous.enabled: Invalid value: "yes": must be a boolean',
      'unknown field "anonymous.paths"',
    ])
  })
})

describe('the flags --authentication-config conflicts with', () => {
  const load = (body: Record<string, unknown>) => loadAuthenticationConfiguration(authnFile(body), 'authn.yaml')

  // Upstream refuses them whatever the file holds: a file without JWT authenticators would otherwise leave the
  // flags (an issuer, required claims) silently unread.
  it('refuses --oidc-* flags whether or not the file configures JWT authenticators', () => {
    for (const file of [load({ jwt: [jwt()] }), load({ anonymous: { enabled: true } }), load({})]) {
      for (const flag of ['oidc-issuer-url', 'oidc-client-id', 'oidc-required-claim', 'oidc-signing-algs']) {
        assert.deepEqual(authenticationFlagConflicts(file, new Set([flag])), ['authentication-config file and oidc-* flags are mutually exclusive'])
      }
    }
    assert.deepEqual(authenticationFlagConflicts(load({}), new Set(['token-auth-file'])), [])
  })

  it('refuses --anonymous-auth when the file configures anonymous authentication', () => {
    assert.deepEqual(authenticationFlagConflicts(load({ anonymous: { enabled: false } }), new Set(['anonymous-auth'])), [
      'anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file',
    ])
    assert.deepEqual(authenticationFlagConflicts(load({ jwt: [jwt()] }), new Set(['anonymous-auth', 'token-auth-file'])), [])
  })
})
