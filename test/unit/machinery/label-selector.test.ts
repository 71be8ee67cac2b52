import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StatusError } from '../../../core/machinery/status-error.js'
import { labelSelectorFromObject, parseLabelSelector } from '../../../core/machinery/label-selector.js'

type Labels = Record<string, string> | undefined

/** selector, labels it must select, labels it must not. */
const MATCHES: Array<[string, Labels[], Labels[]]> = [
  ['', [undefined, {}, { a: 'b' }], []],
  ['app=web', [{ app: 'web' }, { app: 'web', tier: 'x' }], [{ app: 'db' }, {}, undefined]],
  ['app==web', [{ app: 'web' }], [{ app: 'db' }, {}]],
  ['app!=web', [{ app: 'db' }, {}, undefined], [{ app: 'web' }]],
  ['app', [{ app: '' }, { app: 'x' }], [{ other: 'x' }, undefined]],
  ['!app', [{ other: 'x' }, {}, undefined], [{ app: '' }]],
  ['env in (prod,staging)', [{ env: 'prod' }, { env: 'staging' }], [{ env: 'dev' }, {}]],
  ['env notin (prod,staging)', [{ env: 'dev' }, {}], [{ env: 'prod' }]],
  ['env in (prod,)', [{ env: 'prod' }, { env: '' }], [{ env: 'dev' }, {}]],
  ['replicas>2', [{ replicas: '3' }, { replicas: '10' }], [{ replicas: '2' }, { replicas: 'many' }, {}]],
  ['replicas<2', [{ replicas: '1' }, { replicas: '-5' }], [{ replicas: '2' }, {}]],
  ['app=web,tier!=cache', [{ app: 'web' }, { app: 'web', tier: 'db' }], [{ app: 'web', tier: 'cache' }, { tier: 'db' }]],
  ['  app = web ,\ttier\n', [{ app: 'web', tier: 'x' }], [{ app: 'web' }]],
  ['app=', [{ app: '' }], [{ app: 'x' }, {}]],
  ['example.com/owner=team-a', [{ 'example.com/owner': 'team-a' }], [{ owner: 'team-a' }]],
  ['in in (in,notin)', [{ in: 'notin' }], [{ in: 'x' }]],
]

const ERRORS: Array<[string, string]> = [
  ['app=web=x', "found '=', expected: ',' or 'end of string'"],
  [',', "found ',', expected: !, identifier, or 'end of string'"],
  ['app,', "found '', expected: identifier after ','"],
  ['app,,tier', "found ',', expected: identifier after ','"],
  ['(', "found '(', expected: !, identifier, or 'end of string'"],
  ['app web', "unable to parse requirement: found 'web', expected: in, notin, =, ==, !=, gt, lt"],
  ['env in prod', "unable to parse requirement: found 'prod' expected: '('"],
  ['env in (prod', "unable to parse requirement: found '', expected: ',' or ')'"],
  ['env in (prod staging)', "unable to parse requirement: found 'staging', expected: ',' or ')'"],
  ['env in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
  ['app=)', "unable to parse requirement: found ')', expected: identifier"],
  ['!=web', "found '!=', expected: !, identifier, or 'end of string'"],
  ['! =web', "unable to parse requirement: found '=', expected: identifier"],
  ['!app=web', "found '=', expected: ',' or 'end of string'"],
  ['-app=web', 'unable to parse requirement: <nil>: Invalid value: "-app": name part must consist of alphanumeric characters'],
  ['a/b/c', 'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of'],
  [`${'k'.repeat(64)}=v`, 'name part must be no more than 63 characters'],
  ['Bad_Prefix/app=web', 'prefix part a lowercase RFC 1123 subdomain must consist of'],
  ['app=-web', 'unable to parse requirement: values[0][app]: Invalid value: "-web": a valid label must be an empty string'],
  [`app=${'v'.repeat(64)}`, 'must be no more than 63 characters'],
  ['replicas>many', `unable to parse requirement: values[0]: Invalid value: "many": for 'Gt', 'Lt' operators, the value must be an integer`],
]

describe('label selectors', () => {
  for (const [text, selected, rejected] of MATCHES) {
    it(`${JSON.stringify(text)} selects exactly the labels it names`, () => {
      const selector = parseLabelSelector(text)
      for (const labels of selected) assert.equal(selector.matches(labels), true, `selects ${JSON.stringify(labels)}`)
      for (const labels of rejected) assert.equal(selector.matches(labels), false, `rejects ${JSON.stringify(labels)}`)
    })
  }

  for (const [text, message] of ERRORS) {
    it(`refuses ${JSON.stringify(text)} with a 400 naming the problem`, () => {
      assert.throws(
        () => parseLabelSelector(text),
        (err: unknown) => {
          assert.ok(err instanceof StatusError)
          assert.equal(err.code, 400)
          assert.equal(err.reason, 'BadRequest')
          assert.ok(err.message.startsWith(message) || err.message.includes(message), err.message)
          return true
        },
      )
    })
  }

  it('says it is empty only when it restricts nothing', () => {
    assert.equal(parseLabelSelector('').empty, true)
    assert.equal(parseLabelSelector('  ').empty, true)
    assert.equal(parseLabelSelector('a').empty, false)
  })

  it('prints requirements sorted by key with values in order, as upstream does', () => {
    assert.equal(parseLabelSelector('z in (b,a), a!=x, !m, k>3').toString(), 'a!=x,k>3,!m,z in (a,b)')
    assert.deepEqual(parseLabelSelector('env in (b,a,b)').requirements, [{ key: 'env', operator: 'in', values: ['a', 'b'] }])
  })
})

describe('label selectors from objects', () => {
  it('joins matchLabels and matchExpressions with AND', () => {
    const selector = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'edge'] },
        { key: 'canary', operator: 'DoesNotExist' },
      ],
    })
    assert.equal(selector.matches({ app: 'web', tier: 'edge' }), true)
    assert.equal(selector.matches({ app: 'web', tier: 'edge', canary: 'true' }), false)
    assert.equal(selector.matches({ app: 'web', tier: 'back' }), false)
    assert.equal(selector.matches({ tier: 'edge' }), false)
  })

  it('selects everything when empty and nothing when absent', () => {
    assert.equal(labelSelectorFromObject({}).matches({ any: 'thing' }), true)
    assert.equal(labelSelectorFromObject({}).empty, true)
    assert.equal(labelSelectorFromObject(undefined).matches({ any: 'thing' }), false)
    assert.equal(labelSelectorFromObject(null).empty, false)
  })

  it('refuses an unknown operator, and an In without values', () => {
    assert.throws(
      () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Like', values: ['x'] }] }),
      /"Like" is not a valid label selector operator/,
    )
    assert.throws(
      () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      /values: Invalid value: \[\]: for 'in', 'notin' operators, values set can't be empty/,
    )
    assert.throws(
      () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
      /values set must be empty for exists and does not exist/,
    )
  })
})
