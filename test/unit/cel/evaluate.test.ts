import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type CelResultType, compile } from '../../../core/cel/compile.js'
import type { CelVariable } from '../../../core/cel/environments.js'
import { CEL_INPUT_LIMITS, CelEvaluationError, evaluate } from '../../../core/cel/evaluate.js'

function program(variable: CelVariable, expression: string, expected: CelResultType[] = ['bool']) {
  const result = compile(variable, expression, expected)
  assert.ok('program' in result, expression)
  return result.program
}

describe('evaluating compiled expressions', () => {
  it('reads integral JWT numbers as CEL ints, as Kubernetes decodes them', () => {
    const claims = { exp: 1_700_000_000, ratio: 0.5, nested: { n: 3 } }
    assert.equal(evaluate(program('claims', 'claims.exp + 1 == 1700000001'), claims), true)
    assert.equal(evaluate(program('claims', 'type(claims.exp) == int && type(claims.ratio) == double'), claims), true)
    assert.equal(evaluate(program('claims', 'timestamp(claims.exp) > timestamp(0)'), claims), true)
    assert.equal(evaluate(program('claims', 'claims.nested.n * 2 == 6'), claims), true)
  })

  it('runs the optional email_verified idiom whether the claim is present or not', () => {
    const p = program('claims', 'claims.?email_verified.orValue(true) == true')
    assert.equal(evaluate(p, { email: 'a@example.com' }), true)
    assert.equal(evaluate(p, { email: 'a@example.com', email_verified: false }), false)
  })

  it('maps claims with the string extensions', () => {
    const p = program('claims', "claims.sub.replace(':', '-', 1) + '/' + strings.quote(claims.sub) + claims.sub.charAt(0)", ['string'])
    assert.equal(evaluate(p, { sub: 'a:b:c' }), 'a-b:c/"a:b:c"a')
    assert.equal(evaluate(program('claims', "'%s:%d'.format([claims.sub, 2])", ['string']), { sub: 'x' }), 'x:2')
    assert.equal(evaluate(program('claims', "'abc'.replace('', '-')", ['string']), {}), '-a-b-c-')
    assert.equal(evaluate(program('claims', "sets.equivalent(claims.aud, ['b', 'a'])"), { aud: ['a', 'b'] }), true)
  })

  it('gives every user field its zero value when unset', () => {
    const p = program('user', "user.uid == '' && size(user.groups) == 0 && size(user.extra) == 0 && !user.username.startsWith('system:')")
    assert.equal(evaluate(p, { username: 'alice' }), true)
    assert.equal(evaluate(program('user', "'dev' in user.groups"), { username: 'a', groups: ['dev'] }), true)
  })

  it('fills the review fields but leaves resourceAttributes absent for a non-resource request', () => {
    const hasResource = program('request', 'has(request.resourceAttributes)')
    assert.equal(evaluate(hasResource, { user: 'a', nonResourceAttributes: { path: '/healthz' } }), false)
    assert.equal(evaluate(hasResource, { user: 'a', resourceAttributes: { verb: 'get' } }), true)
    const ns = program('request', "request.resourceAttributes.namespace == '' && request.resourceAttributes.subresource == '' && request.uid == ''")
    assert.equal(evaluate(ns, { resourceAttributes: { verb: 'get', resource: 'nodes' } }), true)
    const selector = program('request', "request.resourceAttributes.fieldSelector.requirements.exists(r, r.key == 'spec.nodeName')")
    assert.equal(
      evaluate(selector, { resourceAttributes: { fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] } } }),
      true,
    )
  })

  it('reports a missing claim on one line, without the claims', () => {
    const p = program('claims', "claims.nope == 'x'")
    assert.throws(
      () => evaluate(p, { secret: 's3cr3t' }),
      (err: unknown) =>
        err instanceof CelEvaluationError && err.message === `expression 'claims.nope == 'x'' resulted in error: no such key: nope`,
    )
  })

  it('refuses inputs past its bounds instead of evaluating them', () => {
    let deep: Record<string, unknown> = {}
    const top = deep
    for (let i = 0; i <= CEL_INPUT_LIMITS.maxDepth; i++) deep = (deep['x'] = {}) as Record<string, unknown>
    assert.throws(() => evaluate(program('claims', 'true'), top), /nested deeper than 32 levels/)
    const wide = { groups: Array.from({ length: CEL_INPUT_LIMITS.maxValues }, (_, i) => `g${i}`) }
    assert.throws(() => evaluate(program('claims', 'true'), wide), /more than 10000 values/)
  })
})
