/**
 * Costly CEL in the authentication and authorization configuration files:
 * upstream compiles these expressions when the file is loaded (authentication
 * and authorization cel/compile.go) without estimating their cost, so a file
 * whose expressions would be costly loads, as upstream's does; the cost
 * limit of each evaluation is what bounds them.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { loadAuthorizationConfiguration } from '../../../core/config/authorization.js'
import { authnProblems, jwtFile } from '../../fixtures/config/authn-files.js'

/** `cel.bind(a1, base + base, ... <last(a26)>)`: a value doubled 26 times. */
function bindDoubling(base: string, last: (name: string) => string): string {
  let body = last('a26')
  for (let n = 26; n >= 1; n--) body = `cel.bind(a${n}, ${n === 1 ? `${base} + ${base}` : `a${n - 1} + a${n - 1}`}, ${body})`
  return body
}

describe('costly CEL in an AuthenticationConfiguration file', () => {
  it('loads claim validation rules that loop three deep over the claims or double a string 26 times', () => {
    const file = jwtFile({
      claimValidationRules: [
        { expression: 'claims.groups.all(x, claims.groups.all(y, claims.groups.all(z, x == y || y != z)))', message: 'nested' },
        { expression: bindDoubling('claims.sub', (a) => `size(${a}) > 0`), message: 'doubled' },
      ],
    })
    assert.deepEqual(authnProblems(file), [])
  })

  it('loads user validation rules and an extra mapping of the same kind', () => {
    const file = jwtFile({
      claimMappings: { extra: [{ key: 'example.com/doubled', valueExpression: bindDoubling("'ab'", (a) => `string(size(${a}))`) }] },
      userValidationRules: [{ expression: 'user.groups.all(x, user.groups.all(y, user.groups.all(z, x == y || y != z)))', message: 'nested' }],
    })
    assert.deepEqual(authnProblems(file), [])
  })
})

describe('costly CEL in an AuthorizationConfiguration file', () => {
  it("loads a webhook's match conditions that loop three deep or double a list 26 times", () => {
    const text = JSON.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthorizationConfiguration',
      authorizers: [
        {
          type: 'Webhook',
          name: 'webhook',
          webhook: {
            timeout: '3s',
            subjectAccessReviewVersion: 'v1',
            matchConditionSubjectAccessReviewVersion: 'v1',
            failurePolicy: 'NoOpinion',
            connectionInfo: { type: 'InClusterConfig' },
            matchConditions: [
              { expression: 'request.groups.all(x, request.groups.all(y, request.groups.all(z, x == y || y != z)))' },
              { expression: bindDoubling('request.groups', (a) => `size(${a}) > 0`) },
            ],
          },
        },
      ],
    })
    assert.doesNotThrow(() => loadAuthorizationConfiguration(text, 'authz.yaml'))
  })
})
