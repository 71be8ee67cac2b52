import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, it } from 'node:test'
import { parseAndCheck } from '../../../core/cel/checked.js'
import { kubernetesEnvironment } from '../../../core/cel/library/index.js'
import { CostMeter, PER_CALL_LIMIT, runMetered } from '../../../core/cel/meter.js'

const env = kubernetesEnvironment()

/** The value of `expression`, or the message of the error it fails with. */
function outcome(expression: string): unknown {
  const checked = parseAndCheck(env, expression)
  assert.ok('parsed' in checked, `${expression}: ${'issue' in checked ? checked.issue : ''}`)
  try {
    return runMetered(checked.parsed, {}, new CostMeter(PER_CALL_LIMIT))
  } catch (err) {
    return `error: ${(err as Error).message.split('\n')[0]}`
  }
}

/** Expressions with what cel-go answers for each, whatever the server process's time zone. */
const CASES: readonly [string, unknown][] = [
  ["timestamp('2024-01-01T02:00:00Z').getHours()", 2n],
  ["timestamp('2024-01-01T02:00:00Z').getDayOfWeek()", 1n],
  ["timestamp('2024-07-01T02:00:00Z').getDayOfYear()", 182n],
  ["timestamp('2024-12-31T23:59:59Z').getDayOfYear()", 365n],
  ["timestamp('2024-07-01T02:00:00Z').getDate()", 1n],
  ["timestamp('2024-07-01T02:00:00Z').getDayOfMonth()", 0n],
  ["timestamp('2024-07-01T02:00:00Z').getDayOfYear('Europe/Paris')", 182n],
  ["timestamp('2024-12-31T23:30:00Z').getDayOfYear('+01:00')", 0n],
  ["timestamp('2024-12-31T23:30:00Z').getFullYear('+01:00')", 2025n],
  // 02:30 in Paris, which New York's clocks skip that night.
  ["timestamp('2024-03-10T01:30:00Z').getHours('Europe/Paris')", 2n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('America/New_York')", 21n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('US/Eastern')", 21n],
  ["timestamp('2024-01-01T02:00:00.123Z').getMilliseconds('Asia/Kolkata')", 123n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('Asia/Kolkata')", 7n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('UTC')", 2n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('+05:30')", 7n],
  ["timestamp('2024-01-01T02:00:00Z').getMinutes('+05:30')", 30n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('05:30')", 7n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('-08:00')", 18n],
  ["timestamp('2024-01-01T02:00:00Z').getDate('-08:00')", 31n],
  ["timestamp('2024-01-01T02:00:00Z').getMinutes('-00:30')", 30n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('-00:30')", 1n],
  ["timestamp('0001-01-01T00:00:00Z').getFullYear('-01:00')", 0n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('Bogus/Zone')", 'error: unknown time zone Bogus/Zone'],
  ["timestamp('2024-01-01T02:00:00Z').getHours('../../etc/passwd')", 'error: time: invalid location name'],
  ["timestamp('2024-01-01T02:00:00Z').getHours('Local')", 2n],
  ["timestamp('2024-01-01T02:00:00Z').getHours('x:30')", 'error: strconv.Atoi: parsing "x": invalid syntax'],
  ["timestamp('2024-01-01T02:00:00Z').getHours('+05:3 ')", 'error: strconv.Atoi: parsing "3 ": invalid syntax'],
  ["duration('2h').getHours()", 2n],
  ["dyn(duration('2h')).getHours()", 2n],
]

const CORE = (path: string) => pathToFileURL(join(import.meta.dirname, '..', '..', '..', 'core', 'cel', path)).href

/** A program that prints each case's answer (as `answers` words it) in a fresh process. */
const CHILD = `
import { parseAndCheck } from ${JSON.stringify(CORE('checked.ts'))}
import { kubernetesEnvironment } from ${JSON.stringify(CORE('library/index.ts'))}
import { CostMeter, PER_CALL_LIMIT, runMetered } from ${JSON.stringify(CORE('meter.ts'))}
const env = kubernetesEnvironment()
const out = ${JSON.stringify(CASES.map(([e]) => e))}.map((expression) => {
  const checked = parseAndCheck(env, expression)
  try { return String(runMetered(checked.parsed, {}, new CostMeter(PER_CALL_LIMIT))) } catch (err) { return 'error: ' + err.message.split('\\n')[0] }
})
process.stdout.write(JSON.stringify(out))
`

describe("a timestamp's fields, as cel-go reads them", () => {
  it('reads UTC without a zone, and a named zone or a fixed offset with one', () => {
    for (const [expression, expected] of CASES) assert.equal(outcome(expression), expected, expression)
  })

  it('answers the same under any time zone of the server process', () => {
    const expected = JSON.stringify(CASES.map(([expression]) => String(outcome(expression))))
    for (const TZ of ['America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe']) {
      const got = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
        env: { ...process.env, TZ },
        encoding: 'utf8',
      })
      assert.equal(got, expected, TZ)
    }
  })

  it('refuses a zone that is not a string when checked', () => {
    const checked = parseAndCheck(env, "timestamp('2024-01-01T02:00:00Z').getHours(1)")
    assert.ok('issue' in checked)
    assert.match(checked.issue, /found no matching overload for 'getHours' applied to 'google.protobuf.Timestamp.\(int\)'/)
  })
})
