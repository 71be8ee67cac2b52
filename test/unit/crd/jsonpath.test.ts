import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileJsonPath, type JsonPath, jsonPathSyntaxError, validateSimpleJsonPath } from '../../../core/crd/jsonpath.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'

const OBJECT = {
  metadata: {
    name: 'web',
    labels: { app: 'shop', 'example.com/tier': 'front' },
    annotations: { 'example.com/owner': 'team-a' },
  },
  spec: {
    replicas: 3,
    ratio: 0.25,
    paused: false,
    color: null,
    items: [
      { name: 'a', size: 1 },
      { name: 'b', size: 5 },
      { name: 'c', size: 9 },
    ],
    nested: { key: { with: { dots: 'deep' } } },
  },
  status: {
    conditions: [
      { type: 'Progressing', status: 'True' },
      { type: 'Ready', status: 'False', reason: 'Waiting' },
    ],
  },
}

function compile(text: string, allowMissingKeys = false): JsonPath {
  const path = compileJsonPath(text, { allowMissingKeys })
  if (typeof path === 'string') throw new Error(`${text} did not parse: ${path}`)
  return path
}

/** The results of a one-expression template. */
const find = (text: string, data: unknown = OBJECT, allowMissingKeys = false): unknown[] =>
  compile(text, allowMissingKeys).find(data)[0] ?? []

describe('JSONPath templates', () => {
  const CASES: Array<[string, unknown[]]> = [
    ['.spec.replicas', [3]],
    ['{.spec.replicas}', [3]],
    ['{$.spec.replicas}', [3]],
    ['.metadata.labels.app', ['shop']],
    ['.spec.items[0].name', ['a']],
    ['.spec.items[-1].name', ['c']],
    ['.spec.items[*].name', ['a', 'b', 'c']],
    ['.spec.items[0:2].name', ['a', 'b']],
    ['.spec.items[::2].name', ['a', 'c']],
    ['.spec.items[1:].size', [5, 9]],
    ['.status.conditions[?(@.type=="Ready")].status', ['False']],
    ["{.status.conditions[?(@.type == 'Ready')].reason}", ['Waiting']],
    ['.status.conditions[?(@.reason)].type', ['Ready']],
    ['.spec.items[?(@.size>1)].name', ['b', 'c']],
    ['.spec.items[?(@.size<=5)].name', ['a', 'b']],
    ['.spec.items[?(@.name!="b")].size', [1, 9]],
    ["{.metadata['name']}", ['web']],
    ["{['metadata']['name']}", ['web']],
    // A dict key is read as a path: the dots in it separate fields, as upstream reads it.
    ["{.spec['nested.key.with.dots']}", ['deep']],
    // An escaped dot is part of the field name.
    ['.metadata.annotations.example\\.com/owner', ['team-a']],
    ["{.metadata.labels['app','example\\.com/tier']}", ['shop', 'front']],
    ['{.spec.items[0,2].name}', ['a', 'c']],
    ['{..dots}', ['deep']],
    ['.spec.color', [null]],
    ['.spec.paused', [false]],
  ]
  for (const [text, expected] of CASES) {
    it(`${text} finds ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(find(text), expected)
    })
  }

  it('gives each part of a template its own results, text included', () => {
    assert.deepEqual(compile('name={.metadata.name} replicas={.spec.replicas}').find(OBJECT), [
      ['name='],
      ['web'],
      [' replicas='],
      [3],
    ])
  })

  it('{.spec.items[*]} lists the items themselves', () => {
    assert.deepEqual(find('{.spec.items[*]}'), OBJECT.spec.items)
  })

  it('refuses a missing field unless missing keys are allowed', () => {
    assert.throws(() => find('.spec.missing'), { message: 'missing is not found' })
    assert.deepEqual(find('.spec.missing', OBJECT, true), [])
    assert.deepEqual(find('.spec.missing.deeper', OBJECT, true), [])
    assert.deepEqual(find('.status.conditions[?(@.missing=="x")].type', OBJECT, true), [])
  })

  const EVALUATION_ERRORS: Array<[string, string]> = [
    ['.spec.items[5].name', 'array index out of bounds: index 5, length 3'],
    ['.spec.items[2:1]', 'starting index 2 is greater than ending index 1'],
    ['.spec.items[0:3:0]', 'step must be > 0'],
    ['.metadata[0]', 'map[string]interface {} is not array or slice'],
    ['.spec.replicas[0]', 'int64 is not array or slice'],
    ['.spec.nested[?(@.a)]', 'map[key:map[with:map[dots:deep]]] is not array or slice and cannot be filtered'],
    ['.spec.items[?(@.size=="x")]', 'incompatible types for comparison'],
    ['.spec.items[?(@.size>true)]', 'incompatible types for comparison'],
    ['.spec.items[?(@.size=<1)]', 'unrecognized filter operator =<'],
    ['{.spec.replicas range}', 'range is not supported here'],
    ['{.spec.replicas foo}', 'unrecognized identifier foo'],
  ]
  for (const [text, message] of EVALUATION_ERRORS) {
    it(`${text} fails with "${message}"`, () => {
      assert.throws(() => find(text, OBJECT, true), { message })
    })
  }

  const PARSE_ERRORS: Array<[string, string]> = [
    ['{.spec.replicas', 'unclosed action'],
    ['.spec.items[', 'unterminated array'],
    ['{.spec #}', "unrecognized character in action: U+0023 '#'"],
    ['{.spec\t}', 'unrecognized character in action: U+0009'],
    ['.spec.items[x]', 'invalid array index x'],
    ['.spec.items[?(@.a=="x"', 'unterminated filter'],
    ['.spec.items[?(@.a)x]', 'unclosed array expect ]'],
    ['{"abc}', 'unterminated quoted string'],
    ['{1.2.3}', 'cannot parse number 1.2.3'],
    ['{....a}', 'invalid multiple recursive descent'],
    ['{"a\\qb"}', 'unquote string "a\\qb" error invalid syntax'],
  ]
  for (const [text, message] of PARSE_ERRORS) {
    it(`does not read ${text}: "${message}"`, () => {
      assert.equal(compileJsonPath(text), message)
      assert.equal(jsonPathSyntaxError(text), message)
    })
  }

  it('reads quoted text with escapes as Go unquotes it', () => {
    assert.deepEqual(compile('{"a\\tb"}').find({}), [['a\tb']])
    assert.equal(jsonPathSyntaxError('.spec.replicas'), undefined)
  })
})

describe('simple JSON paths in a CRD', () => {
  const at = fieldPath('spec').child('versions').index(0).child('additionalPrinterColumns').index(0).child('jsonPath')
  it('accepts a path starting with a dot', () => {
    assert.deepEqual(validateSimpleJsonPath('.spec.replicas', at), [])
    assert.deepEqual(validateSimpleJsonPath('.', at), [])
  })
  it('refuses an empty path and one without the leading dot, as upstream words it', () => {
    assert.deepEqual(validateSimpleJsonPath('', at).map(errorText), [
      'spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: "": must not be empty',
    ])
    assert.deepEqual(validateSimpleJsonPath('spec.replicas', at).map(errorText), [
      'spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
    ])
  })
})
