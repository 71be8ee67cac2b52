import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAndCheck } from '../../../core/cel/checked.js'
import { kubernetesEnvironment } from '../../../core/cel/library/index.js'
import { CostMeter, PER_CALL_LIMIT, runMetered } from '../../../core/cel/meter.js'
import { validateObject } from '../../../core/crd/validate.js'
import { errorText, FieldPath } from '../../../core/machinery/field.js'
import {
  REGEX_AT_ONCE_WORK_LIMIT,
  REGEX_WORK_LIMIT,
  RegexWorkBudget,
  RegexWorkExceeded,
  regexFind,
  regexFindAll,
  regexTest,
  userRegexTest,
  withRegexBudget,
} from '../../../core/regex/re2.js'

/** 20 characters that compile to 3,003 instructions; re2js's NFA took 11 s over the input below. */
const COSTLY = '(?:a?){1000}a{1000}b'
const LONG = `b${'a'.repeat(100_000)}`


describe('a match whose worst case is over the work limit is refused before it runs', () => {
  it('refuses the costly pattern over a long input, in every form', () => {
    for (const run of [() => regexTest(COSTLY, LONG), () => regexFind(COSTLY, LONG), () => regexFindAll(COSTLY, LONG)]) {
      assert.throws(run, RegexWorkExceeded)
    }
  })

  it('still matches the costly pattern over an input within the limit', () => {
    assert.equal(regexTest(COSTLY, `${'a'.repeat(1000)}b`), true)
    assert.equal(regexFind(COSTLY, 'b'), '')
  })

  it('keeps ordinary patterns working on values as large as an object', () => {
    const hostname = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'
    assert.equal(regexTest(hostname, `${'abc.'.repeat(375_000)}x`), true)
    assert.equal(regexFind('[0-9]+', `${'x'.repeat(1_500_000)}42`), '42')
    assert.equal(regexFindAll('a*b', 'ab'.repeat(5000)).length, 5000)
    assert.ok(22 * 1_500_000 < REGEX_WORK_LIMIT)
  })

  it('stops a CEL evaluation as its cost limit does', () => {
    const env = kubernetesEnvironment().registerVariable('s', 'string')
    for (const expression of [`s.matches('${COSTLY}')`, `matches(s, '${COSTLY}')`, `s.find('${COSTLY}')`, `s.findAll('${COSTLY}')`, `s.findAll('${COSTLY}', 1)`]) {
      const outcome = parseAndCheck(env, expression)
      assert.ok('parsed' in outcome, expression)
      assert.throws(() => runMetered(outcome.parsed, { s: LONG }, new CostMeter(PER_CALL_LIMIT)), { message: 'operation cancelled: actual cost limit exceeded' })
    }
  })

  it("makes a CRD field's value invalid", () => {
    const schema = { type: 'object', properties: { name: { type: 'string', pattern: COSTLY } } }
    const errors = validateObject({ name: LONG }, schema, FieldPath.root('spec'))
    assert.equal(errors.length, 1)
    const [error] = errors
    assert.equal(error?.type, 'FieldValueInvalid')
    assert.equal(error?.field, 'spec.name')
    assert.match(errorText(error!), /spec\.name in body could not be matched against '\(\?:a\?\)\{1000\}a\{1000\}b': regular expression of 3003 instructions is too costly to match against 100001 characters/)
    assert.deepEqual(validateObject({ name: 'ab' }, schema, FieldPath.root('spec')).map(errorText), [
      "spec.name: Invalid value: \"ab\": spec.name in body should match '(?:a?){1000}a{1000}b'",
    ])
  })
})

describe('all the searches of one findAll are bounded together', () => {
  it('stops a findAll whose every search reads to the end of the input, each search being within the limit', () => {
    // `a.*b` keeps every search looking for a `b` to the end: 50,000 searches of 50,000 characters (a minute and
    // a half here without the bound; with it, a second).
    assert.throws(() => regexFindAll('a.*b|a', 'a'.repeat(50_000)), RegexWorkExceeded)
  })

  it('finds a hundred thousand short matches in a long input', () => {
    assert.equal(regexFindAll('[0-9]+', '12 '.repeat(100_000)).length, 100_000)
  })
})

describe("a user's pattern matched at once (CEL's matches) is bounded by the work it really does", () => {
  /** 307 instructions, nearly all live at every character: within the worst-case limit over 10,000 characters. */
  const LIVE = '^[ab]*a[ab]{300}$'
  const INPUT = `${'a'.repeat(10_000)}${'b'.repeat(301)}`

  it('stops one match past REGEX_AT_ONCE_WORK_LIMIT, and a CEL evaluation with it, with the cost limit words', () => {
    assert.ok(307 * INPUT.length < REGEX_WORK_LIMIT)
    assert.throws(() => userRegexTest(LIVE, INPUT), RegexWorkExceeded)
    const env = kubernetesEnvironment().registerVariable('s', 'string').registerVariable('re', 'string')
    for (const expression of ['s.matches(re)', 'matches(s, re)']) {
      const outcome = parseAndCheck(env, expression)
      assert.ok('parsed' in outcome, expression)
      assert.throws(() => runMetered(outcome.parsed, { s: INPUT, re: LIVE }, new CostMeter(PER_CALL_LIMIT)), { message: 'operation cancelled: actual cost limit exceeded' })
    }
  })

  it('charges the matches of one request to its budget, refusing those past it', () => {
    const short = `${'a'.repeat(1000)}${'b'.repeat(301)}`
    const budget = new RegexWorkBudget(REGEX_AT_ONCE_WORK_LIMIT)
    assert.equal(userRegexTest(LIVE, short), false)
    assert.throws(() => withRegexBudget(budget, () => { for (let i = 0; i < 10; i++) userRegexTest(LIVE, short) }), RegexWorkExceeded)
    assert.ok(budget.remaining < 0)
    assert.equal(userRegexTest('^[a-z]+$', 'a'.repeat(100_000)), true)
  })
})
