/**
 * The rules of one JWT authenticator in an AuthenticationConfiguration:
 * for each rule, the exact line a user sees for a failing file, and a file
 * that passes.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { createCertificateAuthority } from '../../../core/pki/certificates.js'
import { pemEncode } from '../../../core/pki/pem.js'
import { authnProblems as problems, jwtFile as file, runJWTCases as runCases } from '../../fixtures/config/authn-files.js'

describe('a JWT issuer', () => {
  let caPem = ''
  before(async () => {
    caPem = (await createCertificateAuthority({ commonName: 'issuer-ca' })).certificate
  })

  runCases([
    {
      rule: 'needs a url',
      bad: { issuer: { url: '' } },
      message: 'jwt[0].issuer.url: Required value',
      good: { issuer: { url: 'https://issuer.example.com/tenant' } },
    },
    {
      rule: 'uses https',
      bad: { issuer: { url: 'http://x' } },
      message: 'jwt[0].issuer.url: Invalid value: "http://x": URL scheme must be https',
      good: { issuer: { url: 'HTTPS://issuer.example.com' } },
    },
    {
      rule: 'carries no user name or password',
      bad: { issuer: { url: 'https://me:pw@issuer.example.com' } },
      message: 'jwt[0].issuer.url: Invalid value: "https://me:pw@issuer.example.com": URL must not contain a username or password',
      good: { issuer: { url: 'https://issuer.example.com:8443' } },
    },
    {
      rule: 'carries no query',
      bad: { issuer: { url: 'https://issuer.example.com?tenant=a' } },
      message: 'jwt[0].issuer.url: Invalid value: "https://issuer.example.com?tenant=a": URL must not contain a query',
      good: { issuer: { url: 'https://issuer.example.com/?' } },
    },
    {
      rule: 'carries no fragment',
      bad: { issuer: { url: 'https://issuer.example.com#a' } },
      message: 'jwt[0].issuer.url: Invalid value: "https://issuer.example.com#a": URL must not contain a fragment',
      good: { issuer: { url: 'https://issuer.example.com/#' } },
    },
    {
      rule: 'is a URL Go can parse',
      bad: { issuer: { url: 'https://issuer example.com' } },
      message:
        'jwt[0].issuer.url: Invalid value: "https://issuer example.com": parse "https://issuer example.com": invalid character " " in host name',
      good: { issuer: { url: 'https://[::1]:8443/issuer' } },
    },
    {
      rule: 'has a discoveryURL different from its url',
      bad: { issuer: { url: 'https://issuer.example.com', discoveryURL: 'https://issuer.example.com/' } },
      message: 'jwt[0].issuer.discoveryURL: Invalid value: "https://issuer.example.com/": discoveryURL must be different from URL',
      good: { issuer: { discoveryURL: 'https://oidc.oidc-namespace/.well-known/openid-configuration' } },
    },
    {
      rule: 'fetches discovery over https',
      bad: { issuer: { discoveryURL: 'http://oidc.local/.well-known/openid-configuration' } },
      message:
        'jwt[0].issuer.discoveryURL: Invalid value: "http://oidc.local/.well-known/openid-configuration": URL scheme must be https',
      good: { issuer: { discoveryURL: null } },
    },
    {
      rule: 'names at least one audience',
      bad: { issuer: { audiences: [] } },
      message: 'jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required',
      good: { issuer: { audiences: ['api'] } },
    },
    {
      rule: 'has no empty audience',
      bad: { issuer: { audiences: ['api', ''], audienceMatchPolicy: 'MatchAny' } },
      message: 'jwt[0].issuer.audiences[1]: Required value',
      good: { issuer: { audiences: ['api', 'web'], audienceMatchPolicy: 'MatchAny' } },
    },
    {
      rule: 'lists each audience once',
      bad: { issuer: { audiences: ['api', 'api'], audienceMatchPolicy: 'MatchAny' } },
      message: 'jwt[0].issuer.audiences[1]: Duplicate value: "api"',
      good: { issuer: { audiences: ['api', 'web'], audienceMatchPolicy: 'MatchAny' } },
    },
    {
      rule: 'matches several audiences with MatchAny',
      bad: { issuer: { audiences: ['api', 'web'] } },
      message: 'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences',
      good: { issuer: { audiences: ['api', 'web'], audienceMatchPolicy: 'MatchAny' } },
    },
    {
      rule: 'matches one audience with no policy or MatchAny',
      bad: { issuer: { audienceMatchPolicy: 'MatchAll' } },
      message: 'jwt[0].issuer.audienceMatchPolicy: Invalid value: "MatchAll": audienceMatchPolicy must be empty or MatchAny for single audience',
      good: { issuer: { audienceMatchPolicy: 'MatchAny' } },
    },
    {
      rule: 'selects egress for controlplane or cluster only',
      bad: { issuer: { egressSelectorType: 'etcd' } },
      message: 'jwt[0].issuer.egressSelectorType: Invalid value: "etcd": egress selector must be either controlplane or cluster',
      good: { issuer: { egressSelectorType: 'controlplane' } },
    },
  ])

  it('has a certificateAuthority holding PEM certificates, without echoing it', () => {
    assert.deepEqual(problems(file({ issuer: { certificateAuthority: 'not a certificate' } })), [
      'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates',
    ])
    const garbage = pemEncode('CERTIFICATE', new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]))
    assert.deepEqual(problems(file({ issuer: { certificateAuthority: garbage } })), [
      'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": x509: malformed certificate',
    ])
    assert.deepEqual(problems(file({ issuer: { certificateAuthority: caPem } })), [])
  })

  it('does not take over a disallowed issuer, such as the service account issuer', () => {
    const text = file({ issuer: { url: 'https://kubernetes.default.svc' } })
    assert.deepEqual(problems(text, { disallowedIssuers: ['https://kubernetes.default.svc', 'https://b.example.com'] }), [
      'jwt[0].issuer.url: Invalid value: "https://kubernetes.default.svc": URL must not overlap with disallowed issuers: [https://b.example.com https://kubernetes.default.svc]',
    ])
    assert.deepEqual(problems(text, { disallowedIssuers: ['https://b.example.com'] }), [])
  })
})

describe('claim validation rules', () => {
  runCases([
    {
      rule: 'set a claim or an expression, not both',
      bad: { claimValidationRules: [{ claim: 'hd', expression: "claims.hd == 'example.com'" }] },
      message: `jwt[0].claimValidationRules[0]: Invalid value: "hd": claim and expression can't both be set`,
      good: { claimValidationRules: [{ claim: 'hd', requiredValue: 'example.com' }] },
    },
    {
      rule: 'set one of claim and expression',
      bad: { claimValidationRules: [{ message: 'must be from example.com' }] },
      message: 'jwt[0].claimValidationRules[0]: Required value: claim or expression is required',
      good: { claimValidationRules: [{ expression: "claims.hd == 'example.com'", message: 'must be from example.com' }] },
    },
    {
      rule: 'carry a message only with an expression',
      bad: { claimValidationRules: [{ claim: 'hd', message: 'wrong domain' }] },
      message: 'jwt[0].claimValidationRules[0].message: Invalid value: "wrong domain": may not be specified when claim is set',
      good: { claimValidationRules: [{ claim: 'hd' }] },
    },
    {
      rule: 'carry a requiredValue only with a claim',
      bad: { claimValidationRules: [{ expression: 'claims.admin == true', requiredValue: 'yes' }] },
      message: 'jwt[0].claimValidationRules[0].requiredValue: Invalid value: "yes": may not be specified when expression is set',
      good: { claimValidationRules: [{ claim: 'admin', requiredValue: 'yes' }] },
    },
    {
      rule: 'name each claim once',
      bad: { claimValidationRules: [{ claim: 'hd' }, { claim: 'hd', requiredValue: 'x' }] },
      message: 'jwt[0].claimValidationRules[1].claim: Duplicate value: "hd"',
      good: { claimValidationRules: [{ claim: 'hd' }, { claim: 'tenant' }] },
    },
    {
      rule: 'state each expression once',
      bad: { claimValidationRules: [{ expression: 'claims.admin == true' }, { expression: 'claims.admin == true' }] },
      message: 'jwt[0].claimValidationRules[1].expression: Duplicate value: "claims.admin == true"',
      good: { claimValidationRules: [{ expression: 'claims.admin == true' }, { expression: 'claims.exp > 0' }] },
    },
    {
      rule: 'compile at load time',
      bad: { claimValidationRules: [{ expression: 'claims.admin ==' }] },
      message: [`jwt[0].claimValidationRules[0].expression: Invalid value: "claims.admin ==": compilation failed: ERROR: <input>:1:16: Unexpected token: EOF`, `| claims.admin ==`, `| ...............^`],
      good: { claimValidationRules: [{ expression: "claims.?admin.orValue(false) == true" }] },
    },
    {
      rule: 'evaluate to bool',
      bad: { claimValidationRules: [{ expression: 'claims.admin' }] },
      message: 'jwt[0].claimValidationRules[0].expression: Invalid value: "claims.admin": must evaluate to bool',
      good: { claimValidationRules: [{ expression: 'claims.admin == true' }] },
    },
  ])
})

describe('claim mappings', () => {
  runCases([
    {
      rule: 'map the user name from a claim or an expression',
      bad: { claimMappings: { username: {} } },
      message: 'jwt[0].claimMappings.username: Required value: claim or expression is required',
      good: { claimMappings: { username: { expression: "'oidc:' + claims.sub" } } },
    },
    {
      rule: 'map the user name from a claim or an expression, not both',
      bad: { claimMappings: { username: { claim: 'sub', expression: 'claims.sub' } } },
      message: `jwt[0].claimMappings.username: Invalid value: "": claim and expression can't both be set`,
      good: { claimMappings: { username: { expression: 'claims.sub' } } },
    },
    {
      rule: 'require a prefix (maybe empty) with a user name claim',
      bad: { claimMappings: { username: { claim: 'sub' } } },
      message:
        'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
      good: { claimMappings: { username: { claim: 'sub', prefix: 'oidc:' } } },
    },
    {
      rule: 'refuse a prefix with a user name expression',
      bad: { claimMappings: { username: { expression: 'claims.sub', prefix: 'oidc:' } } },
      message: 'jwt[0].claimMappings.username.prefix: Invalid value: "oidc:": may not be specified when expression is set',
      good: { claimMappings: { username: { expression: "'oidc:' + claims.sub" } } },
    },
    {
      rule: 'compile the user name expression at load time',
      bad: { claimMappings: { username: { expression: 'claims.sub +' } } },
      message: [`jwt[0].claimMappings.username.expression: Invalid value: "claims.sub +": compilation failed: ERROR: <input>:1:13: Unexpected token: EOF`, `| claims.sub +`, `| ............^`],
      good: { claimMappings: { username: { expression: 'claims.sub + "@corp"' } } },
    },
    {
      rule: 'map the user name to a string',
      bad: { claimMappings: { username: { expression: 'size(claims.sub)' } } },
      message: 'jwt[0].claimMappings.username.expression: Invalid value: "size(claims.sub)": must evaluate to string',
      good: { claimMappings: { username: { expression: 'string(size(claims.sub))' } } },
    },
    {
      rule: 'require a prefix with a groups claim',
      bad: { claimMappings: { groups: { claim: 'groups' } } },
      message:
        'jwt[0].claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
      good: { claimMappings: { groups: { claim: 'groups', prefix: '' } } },
    },
    {
      rule: 'map groups from a claim or an expression, not both',
      bad: { claimMappings: { groups: { claim: 'groups', prefix: '', expression: 'claims.groups' } } },
      message: `jwt[0].claimMappings.groups: Invalid value: "": claim and expression can't both be set`,
      good: { claimMappings: { groups: { expression: "claims.groups.map(g, 'oidc:' + g)" } } },
    },
    {
      rule: 'map groups to a string or a list of strings',
      bad: { claimMappings: { groups: { expression: 'claims.groups.size() > 0' } } },
      message: 'jwt[0].claimMappings.groups.expression: Invalid value: "claims.groups.size() > 0": must evaluate to one of [string list(string)]',
      good: { claimMappings: { groups: { expression: "claims.groups.size() > 0 ? claims.groups : ['none']" } } },
    },
    {
      rule: 'map the uid from a claim or an expression, not both',
      bad: { claimMappings: { uid: { claim: 'sub', expression: 'claims.sub' } } },
      message: `jwt[0].claimMappings.uid: Invalid value: "": claim and expression can't both be set`,
      good: { claimMappings: { uid: { claim: 'sub' } } },
    },
    {
      rule: 'compile the uid expression at load time',
      bad: { claimMappings: { uid: { expression: 'claims.sub.' } } },
      message: [`jwt[0].claimMappings.uid.expression: Invalid value: "claims.sub.": compilation failed: ERROR: <input>:1:12: Expected IDENTIFIER, got EOF`, `| claims.sub.`, `| ...........^`],
      good: { claimMappings: { uid: { expression: 'claims.sub' } } },
    },
  ])
})
