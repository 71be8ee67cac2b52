/**
 * The estimated cost of CRD rules, as upstream computes it when a CRD is
 * written: the numbers of upstream's TestCostEstimation
 * (apiextensions-apiserver schema/cel/compilation_test.go), each with its
 * schema's bounds absent and set, and the refusals of its validation tests
 * (apis/apiextensions/validation/validation_test.go) with their paths.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type CelSchemaProps, compileRules } from '../../../core/crd-schema/cel-rules.js'
import { sizeNode } from '../../../core/crd-schema/cel-sizes.js'
import { costErrorMessage, expressionMaxCost } from '../../../core/crd-schema/cel-static-cost.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'
import { crd, create, update, version } from '../resources/apiextensions/fixtures.js'

/** The estimated cost of the one rule on `schema` (not a resource root), as upstream's schemaChecker reads it. */
function ruleCost(schema: CelSchemaProps): number {
  const { errors, compiled } = compileRules(schema, fieldPath('schema'), { resourceRoot: false, estimateCost: false })
  assert.deepEqual(errors.map(errorText), [])
  const rule = compiled?.rules[0]
  assert.ok(rule)
  return expressionMaxCost(rule.program.ast, sizeNode(schema, false) ?? assert.fail('schema has sizes'))
}

const rule = (schema: CelSchemaProps, text: string): CelSchemaProps => ({ ...schema, 'x-kubernetes-validations': [{ rule: text }] })

/** A schema for a rule, with its bound (maxItems, maxProperties or maxLength) absent or set. */
type Generator = (bound?: number) => CelSchemaProps

const scalarOf = (type: string): CelSchemaProps =>
  type === 'int-or-string'
    ? { 'x-kubernetes-int-or-string': true }
    : ['duration', 'date', 'date-time'].includes(type)
      ? { type: 'string', format: type }
      : { type }
const arrayOf = (type: string, text: string): Generator => (max) => rule({ type: 'array', items: scalarOf(type), ...(max === undefined ? {} : { maxItems: max }) }, text)
const mapOf = (type: string, text: string): Generator => (max) =>
  rule({ type: 'object', additionalProperties: scalarOf(type), ...(max === undefined ? {} : { maxProperties: max }) }, text)
const stringWith = (text: string): Generator => (max) => rule({ type: 'string', ...(max === undefined ? {} : { maxLength: max }) }, text)
const objectItem: CelSchemaProps = { type: 'object', required: ['required'], properties: { required: { type: 'string' }, optional: { type: 'string' } } }
const maxItems = (max?: number) => (max === undefined ? {} : { maxItems: max })
const maxProperties = (max?: number) => (max === undefined ? {} : { maxProperties: max })
const listOf = (items: CelSchemaProps, text: string): Generator => (max) => rule({ type: 'array', items, ...maxItems(max) }, text)
const mapWith = (values: CelSchemaProps, text: string): Generator => (max) => rule({ type: 'object', additionalProperties: values, ...maxProperties(max) }, text)
/** A list of maps of objects with a required field: upstream's nested root-rule schemas, bounded everywhere or only at the maps. */
const nestedSpec = (text: string, everywhere: boolean): Generator => (max) =>
  rule(
    {
      type: 'array',
      ...(everywhere ? maxItems(max) : {}),
      items: { type: 'object', ...maxProperties(max), additionalProperties: { ...objectItem, ...(everywhere ? maxProperties(max) : {}) } },
    },
    text,
  )

describe('CRD rule cost estimates (upstream TestCostEstimation)', () => {
  // name, schema, cost without bounds, bound, cost with it
  const cases: [string, Generator, number, number, number][] = [
    ['number array with all', arrayOf('number', 'self.all(x, true)'), 4718591, 10, 32],
    ['string array with all', arrayOf('string', 'self.all(x, true)'), 3145727, 20, 62],
    ['boolean array with all', arrayOf('boolean', 'self.all(x, true)'), 1887437, 5, 17],
    ['array of objects with all', (max) => rule({ type: 'array', items: objectItem, ...(max === undefined ? {} : { maxItems: max }) }, 'self.all(x, true)'), 555128, 50, 152],
    ['map of numbers with all', mapOf('number', 'self.all(x, true)'), 1348169, 10, 32],
    ['map of strings with all', mapOf('string', 'self.all(x, true)'), 1179647, 3, 11],
    ['string with contains', stringWith("self.contains('test')"), 314574, 10, 5],
    ['string with startsWith', stringWith("self.startsWith('test')"), 2, 15, 2],
    ['concat string', stringWith('size(self + "hello") > size("hello")'), 314578, 4, 7],
    ['index of array with strings', arrayOf('string', 'self[1] == self[1]'), 314577, 8, 314577],
    ['regex matches simple', stringWith('self.matches("x")'), 314574, 50, 22],
    ['regex matches empty string', stringWith('"".matches("(((((((((())))))))))[0-9]")'), 7, 10, 7],
    [
      'map of strings with value length',
      (max) => rule({ type: 'object', ...(max === undefined ? {} : { maxProperties: max }), additionalProperties: { type: 'string', ...(max === undefined ? {} : { maxLength: max }) } }, 'self.all(x, x.contains(self[x]))'),
      2752507, 10, 72,
    ],
    ['set string maxLength to zero', stringWith('self == "x"'), 2, 0, 1],
    ['set maxLength greater than estimated maxLength', arrayOf('number', 'self.all(x, x == 0.0)'), 6291454, 3 * 1024 * 2048, 25165826],
    ['int-or-string array with all', arrayOf('int-or-string', 'self.all(x, true)'), 4718591, 10, 32],
    ['date-time array with all', arrayOf('date-time', 'self.all(x, true)'), 428963, 25, 77],
    ['map of durations with all', mapOf('duration', 'self.all(x, true)'), 1048577, 5, 17],
    ['extended library regex find', stringWith("self.find('[0-9]+') == ''"), 629147, 10, 11],
    [
      'extended library join',
      (max) => rule({ type: 'array', ...(max === undefined ? {} : { maxItems: max }), items: { type: 'string', ...(max === undefined ? {} : { maxLength: max }) } }, "self.join(' ') == 'aa bb'"),
      329853068905, 10, 43,
    ],
    [
      'extended library replace',
      (max) =>
        rule(
          { type: 'object', properties: { str: { type: 'string', ...(max === undefined ? {} : { maxLength: max }) }, before: { type: 'string', maxLength: 2 }, after: { type: 'string', maxLength: 4 } } },
          "self.str.replace(self.before, self.after) == 'does not matter'",
        ),
      629154, 4, 12,
    ],
    ['check cost of timestamp comparison', mapOf('date-time', 'self["a"] == self["b"]'), 8, 7, 8],
    ['map of booleans with all', mapOf('boolean', 'self.all(x, true)'), 943718, 100, 302],
    ['string with endsWith', stringWith("self.endsWith('test')"), 2, 30, 2],
    ['index of array with numbers', arrayOf('number', 'self[1] == 0.0'), 2, 5000, 2],
    ['regex matches empty regex', stringWith('self.matches("")'), 1, 100, 1],
    ['set array maxLength to zero', arrayOf('number', 'self[3] == 0.0'), 2, 0, 2],
    ['set map maxLength to zero', mapOf('number', 'self["x"] == 0.0'), 2, 0, 2],
    ['nested types with root rule with all supporting maxLength', nestedSpec('self.all(x, x["y"].required == "z")', true), 7340027, 10, 72],
    ['nested types with root rule with one supporting maxLength', nestedSpec('self.all(x, x["y"].required == "z")', false), 7340027, 10, 7340027],
    ['index of array with int-or-strings', arrayOf('int-or-string', 'self[0] == 5'), 3, 10, 3],
    ['index of array with booleans', arrayOf('boolean', 'self[0] == false'), 2, 25, 2],
    ['array of number arrays with all', listOf({ type: 'array', items: { type: 'number' } }, 'self.all(x, true)'), 3145727, 100, 302],
    ['index of array of array of numnbers', listOf({ type: 'array', items: { type: 'number' } }, 'self[0][0] == -1.0'), 3, 51, 3],
    ['array of number maps with all', listOf({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, x.y == 25.2)'), 6291452, 12, 74],
    ['index of array of number maps', listOf({ type: 'object', additionalProperties: { type: 'number' } }, 'self[0].x > 2.0'), 4, 3000, 4],
    ['duration array with all', arrayOf('duration', 'self.all(x, true)'), 2359295, 5, 17],
    ['date array with all', arrayOf('date', 'self.all(x, true)'), 725936, 15, 47],
    ['map of int-or-strings with all', mapOf('int-or-string', 'self.all(x, true)'), 1348169, 15, 47],
    ['map of objects with all', mapWith(objectItem, 'self.all(x, true)'), 428963, 20, 62],
    ['map of number maps with all', mapWith({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, true)'), 1179647, 10, 32],
    ['map of number arrays with all', mapWith({ type: 'array', items: { type: 'number' } }, 'self.all(x, true)'), 1179647, 25, 77],
    ['map of dates with all', mapOf('date', 'self.all(x, true)'), 524288, 10, 32],
    ['map of date-times with all', mapOf('date-time', 'self.all(x, true)'), 349526, 25, 77],
    [
      'extended library isSorted',
      (max) => rule({ type: 'array', ...maxItems(max), items: { type: 'string', ...(max === undefined ? {} : { maxLength: max }) } }, 'self.isSorted() == true'),
      329854432052, 10, 52,
    ],
    [
      'extended library split',
      (max) => {
        const str: CelSchemaProps = { type: 'string', ...(max === undefined ? {} : { maxLength: max }) }
        return rule({ type: 'object', properties: { str, separator: str } }, 'self.str.split(self.separator) == []')
      },
      629160, 10, 22,
    ],
    ['extended library lowerAscii', stringWith("self.lowerAscii() == 'lower!'"), 314575, 10, 6],
    ['check cost of size call', mapOf('integer', 'oldSelf.size() == self.size()'), 5, 10, 5],
    ['check cost of duration comparison', mapOf('duration', 'self["c"] == self["d"]'), 8, 42, 8],
    ['enums with maxLength equals to the longest possible value', (max) => rule({ type: 'string', enum: ['A', 'B', 'C', 'LongValue'], ...(max === undefined ? {} : { maxLength: max }) }, "self.contains('A')"), 2, 1000, 401],
  ]
  // Left out: upstream's rows on a bytes field, on `.getHours()` of duration, date and date-time items, and
  // `self[0] == null` on objects, which do not type-check here (string formats stay strings, and the
  // checker does not compare objects with null); and its rows of cost 0, which upstream does not check.
  for (const [name, generate, unbounded, bound, bounded] of cases) {
    it(`${name}: ${unbounded} unbounded, ${bounded} with ${bound}`, () => {
      assert.equal(ruleCost(generate()), unbounded)
      assert.equal(ruleCost(generate(bound)), bounded)
    })
  }

  it('grows as n² and n³ for nested loops over a list of ten', () => {
    assert.equal(ruleCost(arrayOf('number', 'self.all(x, self.all(y, true))')(10)), 352)
    assert.equal(ruleCost(arrayOf('number', 'self.all(x, self.all(y, self.all(z, true)))')(10)), 3552)
    assert.ok(ruleCost(arrayOf('number', 'self.all(x, self.all(y, true))')()) > 100_000_000)
  })
})

const SCHEMA_PATH = fieldPath('spec').child('validation').child('openAPIV3Schema')
const HINT = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)'
const CONTRIBUTED = 'Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'
const TOTAL_OVER = `spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${HINT}`

const problems = (schema: CelSchemaProps): string[] => compileRules(schema, SCHEMA_PATH).errors.map(errorText)

/** `value`: a list of maps of objects with a `key`, the schema of upstream's double-nested cases. */
function doubleNested(key: CelSchemaProps, bounds: { maxItems?: number; maxProperties?: number } = {}): CelSchemaProps {
  const items: CelSchemaProps = {
    type: 'object',
    ...(bounds.maxProperties === undefined ? {} : { maxProperties: bounds.maxProperties }),
    additionalProperties: { type: 'object', required: ['key'], properties: { key } },
  }
  const value: CelSchemaProps = {
    type: 'array',
    ...(bounds.maxItems === undefined ? {} : { maxItems: bounds.maxItems }),
    items,
    'x-kubernetes-validations': [{ rule: 'self.all(x, x.all(y, x[y].key == x[y].key))' }],
  }
  return { type: 'object', properties: { value } }
}

describe('CRD rule cost limits (upstream validation tests)', () => {
  const valueRule = 'spec.validation.openAPIV3Schema.properties[value].x-kubernetes-validations[0].rule'

  it('forbids a double-nested rule with no limit set, and the schema over its total', () => {
    assert.deepEqual(problems(doubleNested({ type: 'string' })), [
      `${valueRule}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${HINT}`,
      `${valueRule}: ${CONTRIBUTED}`,
      TOTAL_OVER,
    ])
  })

  it('forbids it with only the key length limited', () => {
    assert.equal(problems(doubleNested({ type: 'string', maxLength: 10 })).length, 3)
  })

  it('allows it with all three limits set, or the outermost list limited over number keys', () => {
    assert.deepEqual(problems(doubleNested({ type: 'string', maxLength: 10 }, { maxItems: 10, maxProperties: 10 })), [])
    assert.deepEqual(problems(doubleNested({ type: 'number' }, { maxItems: 4 })), [])
  })

  it('multiplies a rule by the bounds above it and names the costliest rules when the total is over', () => {
    const contains = [{ rule: "self.contains('keyword')" }]
    const schema: CelSchemaProps = {
      type: 'object',
      properties: {
        list: { type: 'array', maxItems: 100000, items: { type: 'string', maxLength: 5000, 'x-kubernetes-validations': contains } },
        map: { type: 'object', maxProperties: 1000, additionalProperties: { type: 'string', maxLength: 5000, 'x-kubernetes-validations': contains } },
        // Under 1% of the limit: counted, never named.
        field: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 50 && self < 100' }] },
      },
    }
    const list = 'spec.validation.openAPIV3Schema.properties[list].items.x-kubernetes-validations[0].rule'
    const map = 'spec.validation.openAPIV3Schema.properties[map].additionalProperties.x-kubernetes-validations[0].rule'
    // 2,001 per string of up to 20,000 bytes: 100,000 times in the list, 1,000 times in the map.
    assert.deepEqual(problems(schema), [
      `${list}: Forbidden: estimated rule cost exceeds budget by factor of 20.0x ${HINT}`,
      `${list}: ${CONTRIBUTED}`,
      `${map}: ${CONTRIBUTED}`,
      `spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 2.0x ${HINT}`,
    ])
  })

  it('holds a messageExpression to the per-expression limit alone, once', () => {
    const strings = (messageExpression: string): CelSchemaProps => ({
      type: 'object',
      properties: { f: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'true', messageExpression }] } },
    })
    const at = 'spec.validation.openAPIV3Schema.properties[f].x-kubernetes-validations[0].messageExpression'
    // Each + reads both sides: (2 + 3 + ... + 8) strings of up to 3 MiB, a tenth of a unit per byte.
    assert.deepEqual(problems(strings('self[0] + self[1] + self[2] + self[3] + self[4] + self[5] + self[6] + self[7]')), [
      `${at}: Forbidden: estimated messageExpression cost exceeds budget by factor of 1.101006x ${HINT}`,
    ])
    // string() of a string has no known size: the concatenation is unbounded.
    assert.deepEqual(problems(strings('string(self[0]) + string(self[1]) + string(self[2])')), [
      `${at}: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x ${HINT}`,
      `${at}: ${CONTRIBUTED}`,
      TOTAL_OVER,
    ])
  })

  it('shows a factor under 1.5 with six decimals, as Go prints %f', () => {
    // 3 per element and 2 besides: 3 × 3,500,000 + 2 is 1.0500002 times the limit.
    const schema: CelSchemaProps = { type: 'object', properties: { n: { type: 'array', maxItems: 3_500_000, items: { type: 'number' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, true)' }] } } }
    assert.deepEqual(problems(schema), [
      `spec.validation.openAPIV3Schema.properties[n].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.050000x ${HINT}`,
    ])
  })
})

describe('CRD rule cost messages', () => {
  it('rounds the factor as Go prints it: to even on an exact tie', () => {
    // 1.0078125 is exact in binary; JavaScript's toFixed would round it up.
    assert.equal(costErrorMessage('estimated rule cost', 10_078_125, 10_000_000), `estimated rule cost exceeds budget by factor of 1.007812x ${HINT}`)
    assert.equal(costErrorMessage('estimated rule cost', 22_500_000, 10_000_000), `estimated rule cost exceeds budget by factor of 2.2x ${HINT}`)
    assert.equal(costErrorMessage('estimated rule cost', 1_000_000_001, 10_000_000), `estimated rule cost exceeds budget by factor of more than 100x ${HINT}`)
  })
})

describe('CRD rule cost limits on update', () => {
  /** 3 × 4,000,000 + 2: over the per-rule limit, well under the total. */
  const expensive = {
    type: 'object',
    properties: { n: { type: 'array', maxItems: 4_000_000, items: { type: 'number' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, true)' }] } },
  }
  const costly = (name: string) => version(name, { schema: { openAPIV3Schema: structuredClone(expensive) } })

  it('refuses the rule on create', () => {
    assert.deepEqual(create(crd({ versions: [costly('v1')] })).problems, [
      `spec.validation.openAPIV3Schema.properties[n].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.200000x ${HINT}`,
    ])
  })

  it('keeps a stored schema that an update leaves unchanged, and refuses the rule in a version that is new', () => {
    const old = crd({ versions: [costly('v1')] })
    assert.deepEqual(update(crd({ versions: [costly('v1')], scope: 'Namespaced' }), old).problems, [])
    // A second version with a schema of its own: v1's stays exempt, v2's is held to the limit.
    const v2 = costly('v2')
    ;(v2['schema'] as { openAPIV3Schema: typeof expensive }).openAPIV3Schema.properties.n.maxItems = 5_000_000
    const added = crd({ versions: [costly('v1'), { ...v2, storage: false }] })
    assert.deepEqual(update(added, old).problems, [
      `spec.versions[1].schema.openAPIV3Schema.properties[n].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.5x ${HINT}`,
    ])
  })
})

describe('CRD rule cost: what upstream reads from the root of a rule', () => {
  /** The shape of a widely installed service mesh's ServiceEntry `spec`: addresses, and a resolution enum. */
  const serviceEntrySpec = (text: string): CelSchemaProps =>
    rule(
      {
        type: 'object',
        properties: {
          addresses: { type: 'array', maxItems: 256, items: { type: 'string', maxLength: 64 } },
          resolution: { type: 'string', enum: ['NONE', 'STATIC', 'DNS', 'DNS_ROUND_ROBIN', 'DYNAMIC_DNS'] },
        },
      },
      text,
    )

  it('sizes the elements of a range that has no path of its own (a conditional) by the root, as upstream does', () => {
    // cel-go gives `k` the path ["@items"]; upstream's estimator drops the first step and reads the root,
    // an object of no size: k.contains("/") costs 1, the loop 256 × 5, the rest 29.
    const text = '!((has(self.addresses) ? self.addresses : []).exists(k, k.contains("/")) && !((has(self.resolution) ? self.resolution : "NONE") in ["STATIC", "NONE"]))'
    assert.equal(ruleCost(serviceEntrySpec(text)), 1309)
    assert.deepEqual(problems({ type: 'object', properties: { spec: serviceEntrySpec(text) } }), [])
  })

  it("sizes a loop's bool as one when comparing it, and a built list by its range", () => {
    // all 2 + 1 + 256 × 6, exists 2 + 1 + 256 × 7, and == on two bools a tenth, rounded up: 1.
    assert.equal(ruleCost(serviceEntrySpec('self.addresses.all(x, x.size() < 10) == self.addresses.exists(x, x.size() > 3)')), 3335)
    // Each map(x, x) list has up to 256 strings of 256 bytes: == reads the shorter list, 256 × 0.1.
    const built = ruleCost(serviceEntrySpec('self.addresses.map(x, x) == self.addresses.map(x, x)'))
    assert.equal(built, 2 * (2 + 10 + 1 + 256 * 13) + 26)
  })

  it('accepts a port rule on the values of a map of 128 in a list of 4096: 4 × 524,288', () => {
    const ports: CelSchemaProps = {
      type: 'object',
      maxProperties: 128,
      additionalProperties: { type: 'integer', 'x-kubernetes-validations': [{ rule: '0 < self && self <= 65535' }] },
      'x-kubernetes-validations': [{ rule: `self.all(key, size(key) < 63 && key.matches("^[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?$"))` }],
    }
    const endpoints: CelSchemaProps = { type: 'array', maxItems: 4096, items: { type: 'object', properties: { ports } } }
    assert.equal(ruleCost(ports.additionalProperties as CelSchemaProps), 4)
    assert.deepEqual(problems({ type: 'object', properties: { endpoints } }), [])
  })
})
