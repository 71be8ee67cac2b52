import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type CelSchemaProps, type CelValidationRule, compileRules, validateRules } from '../../../core/crd-schema/cel-rules.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'

const SCHEMA_PATH = fieldPath('spec').child('validation').child('openAPIV3Schema')

/** A resource schema whose `spec` carries `rules` and a few typed fields. */
function specSchema(rules: CelValidationRule[], extra: Record<string, CelSchemaProps> = {}): CelSchemaProps {
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': rules,
        properties: {
          replicas: { type: 'integer' },
          max: { type: 'integer' },
          name: { type: 'string' },
          ratio: { type: 'number' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          ...extra,
        },
      },
    },
  }
}

/** Compiles (which must succeed) and validates; the errors as a client reads them. */
function failures(schema: CelSchemaProps, value: unknown, oldValue?: unknown): string[] {
  const { errors, compiled } = compileRules(schema, SCHEMA_PATH)
  assert.deepEqual(errors.map(errorText), [], 'the schema compiles')
  return validateRules(compiled, value, oldValue, fieldPath('')).map(errorText)
}

function compileErrors(schema: CelSchemaProps): string[] {
  return compileRules(schema, SCHEMA_PATH).errors.map(errorText)
}

const RULE = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations'

const goRule = (rule: string, messageExpression = '') =>
  `apiextensions.ValidationRule{Rule:${JSON.stringify(rule)}, Message:"", MessageExpression:${JSON.stringify(messageExpression)}, ` +
  'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}'

describe('x-kubernetes-validations: evaluating rules on objects', () => {
  const cases: {
    name: string
    rules: CelValidationRule[]
    spec: Record<string, unknown>
    oldSpec?: Record<string, unknown>
    want: string[]
  }[] = [
    {
      name: 'a rule that holds reports nothing',
      rules: [{ rule: 'self.replicas <= self.max', message: 'replicas must not exceed max' }],
      spec: { replicas: 2, max: 3 },
      want: [],
    },
    {
      name: 'a failed rule reports its message on the node with the schema type as value',
      rules: [{ rule: 'self.replicas <= self.max', message: 'replicas must not exceed max' }],
      spec: { replicas: 5, max: 3 },
      want: ['spec: Invalid value: "object": replicas must not exceed max'],
    },
    {
      name: 'without a message the rule itself is quoted',
      rules: [{ rule: 'self.replicas <= self.max' }],
      spec: { replicas: 5, max: 3 },
      want: ['spec: Invalid value: "object": failed rule: self.replicas <= self.max'],
    },
    {
      name: 'messageExpression builds the message from the object',
      // string(int) has no size bound, so upstream's cost limit refuses it in a concatenation: the message uses a bounded string.
      rules: [{ rule: 'self.replicas <= self.max', messageExpression: "'replicas exceed the maximum for ' + self.name" }],
      spec: { replicas: 5, max: 3, name: 'web' },
      want: ['spec: Invalid value: "object": replicas exceed the maximum for web'],
    },
    {
      name: 'a messageExpression that fails falls back to the message',
      rules: [{ rule: 'self.replicas <= 3', message: 'too many', messageExpression: "'name ' + self.name" }],
      spec: { replicas: 5 },
      want: ['spec: Invalid value: "object": too many'],
    },
    {
      name: 'fieldPath moves the error onto the named field',
      rules: [{ rule: 'self.replicas <= self.max', message: 'too many', fieldPath: '.replicas' }],
      spec: { replicas: 5, max: 3 },
      want: ['spec.replicas: Invalid value: "object": too many'],
    },
    {
      name: 'fieldPath into a map names the key',
      rules: [{ rule: "self.labels['app'] != ''", message: 'empty app', fieldPath: ".labels['app']" }],
      spec: { labels: { app: '' } },
      want: ['spec.labels[app]: Invalid value: "object": empty app'],
    },
    {
      name: 'reason FieldValueForbidden',
      rules: [{ rule: '!has(self.name)', message: 'name is managed', reason: 'FieldValueForbidden', fieldPath: '.name' }],
      spec: { name: 'x' },
      want: ['spec.name: Forbidden: name is managed'],
    },
    {
      name: 'reason FieldValueRequired',
      rules: [{ rule: 'has(self.name)', message: 'name is needed', reason: 'FieldValueRequired', fieldPath: '.name' }],
      spec: {},
      want: ['spec.name: Required value: name is needed'],
    },
    {
      name: 'reason FieldValueDuplicate shows the type and no message',
      rules: [{ rule: 'self.replicas != self.max', message: 'same', reason: 'FieldValueDuplicate' }],
      spec: { replicas: 1, max: 1 },
      want: ['spec: Duplicate value: "object"'],
    },
    {
      name: 'reading an absent field is an evaluation error naming the rule',
      rules: [{ rule: 'self.max > 1' }],
      spec: { replicas: 1 },
      want: ['spec: Invalid value: "object": no such key: max evaluating rule: self.max > 1'],
    },
    {
      name: 'numbers are doubles even when written as integers; maps read by key',
      rules: [{ rule: "self.ratio > 0.5 && self.labels.app == 'web' && 'app' in self.labels" }],
      spec: { ratio: 1, labels: { app: 'web' } },
      want: [],
    },
    {
      name: 'a transition rule does not run on create',
      rules: [{ rule: 'self.name == oldSelf.name', message: 'name is immutable' }],
      spec: { name: 'b' },
      want: [],
    },
    {
      name: 'a transition rule holds when the value is unchanged',
      rules: [{ rule: 'self == oldSelf', message: 'spec is immutable' }],
      spec: { name: 'a', replicas: 1, labels: { x: 'y' } },
      oldSpec: { name: 'a', replicas: 1, labels: { x: 'y' } },
      want: [],
    },
    {
      name: 'a transition rule fails when the value changed',
      rules: [{ rule: 'self == oldSelf', message: 'spec is immutable' }],
      spec: { name: 'a', replicas: 2 },
      oldSpec: { name: 'a', replicas: 1 },
      want: ['spec: Invalid value: "object": spec is immutable'],
    },
    {
      name: 'an optionalOldSelf rule runs on create with oldSelf empty',
      rules: [{ rule: 'oldSelf.hasValue() || self.replicas == 1', message: 'start with one replica', optionalOldSelf: true }],
      spec: { replicas: 3 },
      want: ['spec: Invalid value: "object": start with one replica'],
    },
    {
      name: 'an optionalOldSelf rule sees the old value on update',
      rules: [{ rule: '!oldSelf.hasValue() || self.replicas >= oldSelf.value().replicas', message: 'no scale down', optionalOldSelf: true }],
      spec: { replicas: 2 },
      oldSpec: { replicas: 3 },
      want: ['spec: Invalid value: "object": no scale down'],
    },
  ]
  for (const c of cases) {
    it(c.name, () => {
      const oldObject = c.oldSpec ? { spec: c.oldSpec } : undefined
      assert.deepEqual(failures(specSchema(c.rules), { spec: c.spec }, oldObject), c.want)
    })
  }

  it('runs a rule on every list item, at its index', () => {
    const schema = specSchema([], {
      ports: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0 && self < 65536', message: 'bad port' }] } },
    })
    assert.deepEqual(failures(schema, { spec: { ports: [80, 0, 70000] } }), [
      'spec.ports[1]: Invalid value: "integer": bad port',
      'spec.ports[2]: Invalid value: "integer": bad port',
    ])
  })

  it('runs a rule on every map value, at its key', () => {
    const schema = specSchema([], {
      limits: { type: 'object', additionalProperties: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.endsWith('Mi')" }] } },
    })
    assert.deepEqual(failures(schema, { spec: { limits: { a: '1Mi', b: '2Gi' } } }), [
      'spec.limits[b]: Invalid value: "string": failed rule: self.endsWith(\'Mi\')',
    ])
  })

  it('gives map values and list-type map items their old selves by key', () => {
    const immutable = [{ rule: 'self == oldSelf', message: 'immutable' }]
    const schema = specSchema([], {
      limits: { type: 'object', maxProperties: 16, additionalProperties: { type: 'string', maxLength: 64, 'x-kubernetes-validations': immutable } },
      volumes: {
        type: 'array',
        maxItems: 8,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, size: { type: 'integer' } },
          'x-kubernetes-validations': [{ rule: 'self.size >= oldSelf.size', message: 'volumes may only grow' }],
        },
      },
    })
    const oldSpec = { limits: { a: '1', b: '2' }, volumes: [{ name: 'x', size: 5 }, { name: 'y', size: 5 }] }
    // New entries have no old self; reordered items still meet theirs.
    const spec = { limits: { a: '1', b: '3', c: '9' }, volumes: [{ name: 'z', size: 1 }, { name: 'y', size: 4 }, { name: 'x', size: 6 }] }
    assert.deepEqual(failures(schema, { spec }, { spec: oldSpec }), [
      'spec.limits[b]: Invalid value: "string": immutable',
      'spec.volumes[1]: Invalid value: "object": volumes may only grow',
    ])
  })

  it('lets root rules read apiVersion, kind and metadata.name', () => {
    const schema: CelSchemaProps = {
      type: 'object',
      'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('web-') && self.kind == 'Site'", message: 'bad name' }],
      properties: { spec: { type: 'object' } },
    }
    assert.deepEqual(failures(schema, { apiVersion: 'x.io/v1', kind: 'Site', metadata: { name: 'web-a' }, spec: {} }), [])
    assert.deepEqual(failures(schema, { apiVersion: 'x.io/v1', kind: 'Site', metadata: { name: 'db' }, spec: {} }), [
      ': Invalid value: "object": bad name',
    ])
  })

  it('reaches escaped property names and int-or-string values', () => {
    const schema = specSchema([{ rule: "self.x__dash__y == 1 && self.__namespace__ == 'n' && self.port == 'http'" }], {
      'x-y': { type: 'integer' },
      namespace: { type: 'string' },
      port: { 'x-kubernetes-int-or-string': true },
    })
    assert.deepEqual(failures(schema, { spec: { 'x-y': 1, namespace: 'n', port: 'http' } }), [])
    assert.equal(failures(schema, { spec: { 'x-y': 2, namespace: 'n', port: 'http' } }).length, 1)
  })

  it('does not validate null or absent values', () => {
    const schema = specSchema([], { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() > 3' }] } })
    assert.deepEqual(failures(schema, { spec: { name: null } }), [])
    assert.deepEqual(failures(schema, { spec: {} }), [])
  })
})

describe('x-kubernetes-validations: compiling rules', () => {
  it('reports a syntax error at the rule with upstream value and wording', () => {
    assert.deepEqual(compileErrors(specSchema([{ rule: 'self.replicas <' }])), [
      `${RULE}[0].rule: Invalid value: ${goRule('self.replicas <')}: compilation failed: ERROR: <input>:1:16: Unexpected token: EOF\n | self.replicas <\n | ...............^`,
    ])
  })

  it('types self from the schema: an unknown field or a wrong operand does not compile', () => {
    const errors = compileErrors(specSchema([{ rule: 'self.nope == 1' }, { rule: "self.replicas == 'x'" }]))
    assert.equal(errors.length, 2)
    assert.equal(errors[0], `${RULE}[0].rule: Invalid value: ${goRule('self.nope == 1')}: compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^`)
    assert.match(errors[1] ?? '', /\[1\]\.rule: .*compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '\(int, string\)'/)
  })

  it('refuses a rule that is not a bool and a messageExpression that is not a string', () => {
    assert.deepEqual(compileErrors(specSchema([{ rule: 'self.replicas' }, { rule: 'true', messageExpression: 'self.replicas' }])), [
      `${RULE}[0].rule: Invalid value: ${goRule('self.replicas')}: cel expression must evaluate to a bool`,
      `${RULE}[1].messageExpression: Invalid value: ${goRule('true', 'self.replicas')}: messageExpression must evaluate to a string`,
    ])
  })

  it('checks the fields of a rule before compiling it', () => {
    const errors = compileErrors(
      specSchema([
        { rule: '' },
        { rule: 'true', reason: 'FieldValueNope' },
        { rule: 'true', fieldPath: '.nope' },
        { rule: 'true', fieldPath: "['name'" },
        { rule: 'true', messageExpression: '  ' },
      ]),
    )
    assert.deepEqual(errors, [
      `${RULE}[0].rule: Required value: rule is not specified`,
      `${RULE}[1].reason: Unsupported value: "FieldValueNope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
      `${RULE}[2].fieldPath: Invalid value: ".nope": fieldPath must be a valid path`,
      `${RULE}[3].fieldPath: Invalid value: "['name'": fieldPath must be a valid path`,
      `${RULE}[4].messageExpression: Required value: messageExpression must be non-empty if specified`,
    ])
  })

  it('refuses optionalOldSelf on a rule without oldSelf, and oldSelf under a list that is not a map', () => {
    const schema = specSchema([{ rule: 'self.replicas > 0', optionalOldSelf: true }], {
      tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 32, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } },
    })
    assert.deepEqual(compileErrors(schema), [
      `${RULE}[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
      'spec.validation.openAPIV3Schema.properties[spec].properties[tags].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": ' +
        'oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec].properties[tags]',
    ])
  })

  it('names nested rules by their schema path through items and additionalProperties', () => {
    const schema = specSchema([], {
      ports: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self' }] } },
      limits: { type: 'object', additionalProperties: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self' }] } },
    })
    assert.deepEqual(
      compileErrors(schema).map((e) => e.split(': ')[0]),
      [
        'spec.validation.openAPIV3Schema.properties[spec].properties[ports].items.x-kubernetes-validations[0].rule',
        'spec.validation.openAPIV3Schema.properties[spec].properties[limits].additionalProperties.x-kubernetes-validations[0].rule',
      ],
    )
  })

  it('compiles nothing for a schema without rules', () => {
    const { errors, compiled } = compileRules(specSchema([]), SCHEMA_PATH)
    assert.deepEqual(errors, [])
    assert.equal(compiled, undefined)
  })
})
