/**
 * Extra mappings, the email_verified rule and user validation rules of a
 * JWT authenticator: for each rule, the exact line a user sees for a
 * failing file, and a file that passes.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { authnProblems, jwtFile, runJWTCases } from '../../fixtures/config/authn-files.js'

const extra = (key: string, valueExpression = 'claims.tenant') => ({ claimMappings: { extra: [{ key, valueExpression }] } })

describe('extra mappings', () => {
  runJWTCases([
    {
      rule: 'need a key',
      bad: extra(''),
      message: 'jwt[0].claimMappings.extra[0].key: Required value',
      good: extra('example.org/tenant'),
    },
    {
      rule: 'key by a domain-prefixed path',
      bad: extra('tenant'),
      message: 'jwt[0].claimMappings.extra[0].key: Invalid value: "tenant": must be a domain-prefixed path (such as "acme.io/foo")',
      good: extra('acme.io/foo'),
    },
    {
      rule: 'prefix the key with a DNS subdomain',
      bad: extra('acme_io/foo'),
      message:
        "jwt[0].claimMappings.extra[0].key: Invalid value: \"acme_io\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      good: extra('acme-io.example/foo'),
    },
    {
      rule: 'follow the prefix with HTTP path characters',
      bad: extra('acme.io/a b'),
      message:
        "jwt[0].claimMappings.extra[0].key: Invalid value: \"a b\": Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
      good: extra('acme.io/a/b:c'),
    },
    {
      rule: 'key in lowercase',
      bad: extra('acme.io/Tenant'),
      message: 'jwt[0].claimMappings.extra[0].key: Invalid value: "acme.io/Tenant": must be lowercase',
      good: extra('acme.io/tenant'),
    },
    {
      rule: 'stay out of the domains Kubernetes reserves',
      bad: extra('authentication.kubernetes.io/tenant'),
      message:
        'jwt[0].claimMappings.extra[0].key: Invalid value: "authentication.kubernetes.io/tenant": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use',
      good: extra('notkubernetes.io/tenant'),
    },
    {
      rule: 'use each key once',
      bad: {
        claimMappings: {
          extra: [
            { key: 'acme.io/a', valueExpression: 'claims.a' },
            { key: 'acme.io/a', valueExpression: 'claims.b' },
          ],
        },
      },
      message: 'jwt[0].claimMappings.extra[1].key: Duplicate value: "acme.io/a"',
      good: {
        claimMappings: {
          extra: [
            { key: 'acme.io/a', valueExpression: 'claims.a' },
            { key: 'acme.io/b', valueExpression: 'claims.b' },
          ],
        },
      },
    },
    {
      rule: 'need a value expression',
      bad: extra('acme.io/a', ''),
      message: 'jwt[0].claimMappings.extra[0].valueExpression: Required value',
      good: extra('acme.io/a', "'fixed'"),
    },
    {
      rule: 'compile the value expression at load time',
      bad: extra('acme.io/a', 'claims.roles.map(r, r.lowerAscii()'),
      message: [
        `jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "claims.roles.map(r, r.lowerAscii()": compilation failed: ERROR: <input>:1:35: Expected RPAREN, got EOF`, `| claims.roles.map(r, r.lowerAscii()`, `| ..................................^`,
      ],
      good: extra('acme.io/a', 'claims.roles.map(r, r.lowerAscii())'),
    },
    {
      rule: 'map to a string or a list of strings',
      bad: extra('acme.io/a', 'claims.roles.size()'),
      message: 'jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "claims.roles.size()": must evaluate to one of [string list(string)]',
      good: extra('acme.io/a', 'string(claims.roles.size())'),
    },
  ])
})

describe('a user name taken from claims.email', () => {
  const emailRule =
    'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression'

  it('is refused unless claims.email_verified is used somewhere', () => {
    assert.deepEqual(authnProblems(jwtFile({ claimMappings: { username: { expression: 'claims.email' } } })), [emailRule])
    // A mention inside a string literal is not a use.
    const literal = { claimMappings: { username: { expression: 'claims.email' } }, claimValidationRules: [{ expression: "'claims.email_verified' != ''" }] }
    assert.deepEqual(authnProblems(jwtFile(literal)), [emailRule])
  })

  it('is accepted with email_verified in a claim validation rule, an extra mapping or the expression itself', () => {
    const username = { username: { expression: 'claims.email' } }
    for (const o of [
      { claimMappings: username, claimValidationRules: [{ expression: 'claims.?email_verified.orValue(true) == true' }] },
      { claimMappings: { ...username, extra: [{ key: 'acme.io/verified', valueExpression: 'string(claims.email_verified)' }] } },
      { claimMappings: { username: { expression: "claims.email_verified == true ? claims.email : ''" } } },
      { claimMappings: { username: { expression: "has(claims.email_verified) ? claims.email : ''" } } },
    ]) {
      assert.deepEqual(authnProblems(jwtFile(o)), [], JSON.stringify(o))
    }
  })

  it('is accepted as a claim, where the server checks email_verified itself', () => {
    assert.deepEqual(authnProblems(jwtFile({ claimMappings: { username: { claim: 'email', prefix: '' } } })), [])
  })
})

describe('user validation rules', () => {
  runJWTCases([
    {
      rule: 'need an expression',
      bad: { userValidationRules: [{ message: 'no system users' }] },
      message: 'jwt[0].userValidationRules[0].expression: Required value',
      good: { userValidationRules: [{ expression: "!user.username.startsWith('system:')", message: 'no system users' }] },
    },
    {
      rule: 'state each expression once',
      bad: {
        userValidationRules: [{ expression: "!user.username.startsWith('system:')" }, { expression: "!user.username.startsWith('system:')" }],
      },
      message: `jwt[0].userValidationRules[1].expression: Duplicate value: "!user.username.startsWith('system:')"`,
      good: {
        userValidationRules: [
          { expression: "!user.username.startsWith('system:')" },
          { expression: "user.groups.all(g, !g.startsWith('system:'))" },
        ],
      },
    },
    {
      rule: 'see the mapped user, not the claims',
      bad: { userValidationRules: [{ expression: "claims.sub != ''" }] },
      message: [`jwt[0].userValidationRules[0].expression: Invalid value: "claims.sub != ''": compilation failed: ERROR: <input>:1:1: undeclared reference to 'claims' (in container '')`, `| claims.sub != ''`, `| ^`],
      good: { userValidationRules: [{ expression: "user.username != '' && user.uid != '' && size(user.extra) >= 0" }] },
    },
    {
      rule: 'name only fields the user has',
      bad: { userValidationRules: [{ expression: "user.name != ''" }] },
      message: [`jwt[0].userValidationRules[0].expression: Invalid value: "user.name != ''": compilation failed: ERROR: <input>:1:5: undefined field 'name'`, `| user.name != ''`, `| ....^`],
      good: { userValidationRules: [{ expression: "user.username != ''" }] },
    },
    {
      rule: 'evaluate to bool',
      bad: { userValidationRules: [{ expression: 'user.username' }] },
      message: 'jwt[0].userValidationRules[0].expression: Invalid value: "user.username": must evaluate to bool',
      good: { userValidationRules: [{ expression: "user.username != 'root'" }] },
    },
  ])
})
