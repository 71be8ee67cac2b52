import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StatusError } from '../../../core/machinery/status-error.js'
import { parseFieldSelector } from '../../../core/machinery/field-selector.js'

type Fields = Record<string, string>

/** selector, fields it must select, fields it must not. */
const MATCHES: Array<[string, Fields[], Fields[]]> = [
  ['', [{}, { 'metadata.name': 'a' }], []],
  ['metadata.name=web', [{ 'metadata.name': 'web' }], [{ 'metadata.name': 'db' }, {}]],
  ['metadata.name==web', [{ 'metadata.name': 'web' }], [{ 'metadata.name': 'db' }]],
  ['metadata.name!=web', [{ 'metadata.name': 'db' }, {}], [{ 'metadata.name': 'web' }]],
  ['spec.nodeName=', [{ 'spec.nodeName': '' }, {}], [{ 'spec.nodeName': 'node-1' }]],
  [
    'metadata.namespace=prod,metadata.name!=web',
    [{ 'metadata.namespace': 'prod', 'metadata.name': 'db' }],
    [{ 'metadata.namespace': 'prod', 'metadata.name': 'web' }, { 'metadata.namespace': 'dev', 'metadata.name': 'db' }],
  ],
  ['note=a\\,b', [{ note: 'a,b' }], [{ note: 'a' }]],
  ['note=x\\=y\\\\z', [{ note: 'x=y\\z' }], [{ note: 'x=y\\\\z' }]],
  ['a=b,,', [{ a: 'b' }], [{ a: 'c' }]],
]

const ERRORS: Array<[string, string]> = [
  ['metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
  ['a=b,c', "invalid selector: 'a=b,c'; can't understand 'c'"],
  ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
  ['a=\\x', 'invalid field selector: invalid escape sequence: \\x'],
  ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
]

describe('field selectors', () => {
  for (const [text, selected, rejected] of MATCHES) {
    it(`${JSON.stringify(text)} selects exactly the fields it names`, () => {
      const selector = parseFieldSelector(text)
      for (const fields of selected) assert.equal(selector.matches(fields), true, `selects ${JSON.stringify(fields)}`)
      for (const fields of rejected) assert.equal(selector.matches(fields), false, `rejects ${JSON.stringify(fields)}`)
    })
  }

  for (const [text, message] of ERRORS) {
    it(`refuses ${JSON.stringify(text)} with a 400 naming the problem`, () => {
      assert.throws(
        () => parseFieldSelector(text),
        (err: unknown) => {
          assert.ok(err instanceof StatusError)
          assert.equal(err.code, 400)
          assert.equal(err.message, message)
          return true
        },
      )
    })
  }

  it('lists its requirements with == read as =, for the caller to check field names', () => {
    assert.deepEqual(parseFieldSelector('metadata.name==a,spec.nodeName!=n\\,1').requirements, [
      { field: 'metadata.name', operator: '=', value: 'a' },
      { field: 'spec.nodeName', operator: '!=', value: 'n,1' },
    ])
  })

  it('says it is empty only when it restricts nothing', () => {
    assert.equal(parseFieldSelector('').empty, true)
    assert.equal(parseFieldSelector(',').empty, true)
    assert.equal(parseFieldSelector('a=b').empty, false)
  })

  it('prints values escaped again', () => {
    assert.equal(parseFieldSelector('b!=x\\,y,a=1').toString(), 'a=1,b!=x\\,y')
  })
})
