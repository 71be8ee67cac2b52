import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cronScheduleError } from '../../../core/resources/batch/cron-schedule.js'
import { loadLocationError } from '../../../core/resources/batch/time-zone.js'

const accepted: [string, string][] = [
  ['every minute', '* * * * *'],
  ['a step over the whole range', '*/15 * * * *'],
  ['a step from a start to the maximum', '5/10 * * * *'],
  ['ranges with steps and lists', '0-30/5,45 8-18 * * 1-5'],
  ['month and weekday names in any case', '0 9 * JAN-mar,Dec mon-FRI'],
  ['question mark as a wildcard', '0 0 ? * *'],
  ['empty list entries, which the parser skips', '0,,30 * * * *'],
  ['extra whitespace between fields', '  0   12  1  *  0  '],
  ['the last day of the ranges', '59 23 31 12 6'],
  ['a wildcard range whose end is ignored', '*-3 * * * *'],
  ['@yearly', '@yearly'],
  ['@annually', '@annually'],
  ['@monthly', '@monthly'],
  ['@weekly', '@weekly'],
  ['@daily', '@daily'],
  ['@midnight', '@midnight'],
  ['@hourly', '@hourly'],
  ['@every with a duration', '@every 1h30m'],
  ['a known time zone before the fields', 'TZ=Europe/Berlin 0 6 * * *'],
  ['CRON_TZ before a descriptor', 'CRON_TZ=UTC @daily'],
]

const refused: [string, string, string][] = [
  ['an empty schedule', '', 'empty spec string'],
  ['four fields', '0 0 * *', 'expected exactly 5 fields, found 4: [0 0 * *]'],
  ['six fields (no seconds field)', '0 0 0 * * *', 'expected exactly 5 fields, found 6: [0 0 0 * * *]'],
  ['a minute above 59', '60 * * * *', 'end of range (60) above maximum (59): 60'],
  ['an hour above 23', '0 24 * * *', 'end of range (24) above maximum (23): 24'],
  ['day of month 0', '0 0 0 * *', 'beginning of range (0) below minimum (1): 0'],
  ['month 13', '0 0 1 13 *', 'end of range (13) above maximum (12): 13'],
  ['weekday 7', '0 0 * * 7', 'end of range (7) above maximum (6): 7'],
  ['a reversed range', '0 10-5 * * *', 'beginning of range (10) beyond end of range (5): 10-5'],
  ['a zero step', '*/0 * * * *', 'step of range should be a positive number: */0'],
  ['two slashes', '1/2/3 * * * *', 'too many slashes: 1/2/3'],
  ['two hyphens', '1-2-3 * * * *', 'too many hyphens: 1-2-3'],
  ['a word', 'x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
  ['an unknown month name', '0 0 1 foo *', 'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax'],
  ['a month name in the weekday field', '0 0 * * jan', 'failed to parse int from jan: strconv.Atoi: parsing "jan": invalid syntax'],
  ['a negative number', '-1 * * * *', 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'],
  ['a signed negative step', '*/-2 * * * *', 'negative number (-2) not allowed: -2'],
  ['an unknown descriptor', '@often', 'unrecognized descriptor: @often'],
  ['@every without a unit', '@every 5', 'failed to parse duration @every 5: time: missing unit in duration "5"'],
  ['@every with an unknown unit', '@every 5d', 'failed to parse duration @every 5d: time: unknown unit "d" in duration "5d"'],
  ['@every with no duration', '@every x', 'failed to parse duration @every x: time: invalid duration "x"'],
  ['an unknown time zone', 'TZ=Mars/Base 0 0 * * *', 'provided bad location Mars/Base: unknown time zone Mars/Base'],
]

describe('cron schedules as upstream’s parser reads them', () => {
  for (const [what, schedule] of accepted) {
    it(`accepts ${what}: ${JSON.stringify(schedule)}`, () => {
      assert.equal(cronScheduleError(schedule), undefined)
    })
  }
  for (const [what, schedule, message] of refused) {
    it(`refuses ${what}: ${JSON.stringify(schedule)}`, () => {
      assert.equal(cronScheduleError(schedule), message)
    })
  }
})

describe('time zones as Go’s LoadLocation finds them', () => {
  it('knows IANA names, their links, and Go’s built-in names', () => {
    for (const zone of ['America/New_York', 'Europe/Kyiv', 'US/Eastern', 'Etc/GMT+5', 'UTC', 'Local', ''])
      assert.equal(loadLocationError(zone), undefined, zone)
  })

  it('refuses unknown names, a name in the wrong case, and numeric offsets', () => {
    for (const zone of ['Mars/Olympus', 'america/new_york', 'utc', '+01:00']) assert.equal(loadLocationError(zone), `unknown time zone ${zone}`)
  })
})
