import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCronSchedule } from '../../core/controllers/workloads/cron-next.js'

const from = new Date('2026-03-07T10:17:30Z')

function firstThree(schedule: string, timeZone?: string): string[] {
  const cron = parseCronSchedule(schedule, timeZone)
  const times: string[] = []
  let at = from
  for (let i = 0; i < 3; i++) {
    at = cron.next(at)!
    times.push(at.toISOString().replace('.000', ''))
  }
  return times
}

describe('when a CronJob schedule next comes due', () => {
  it('steps, ranges and weekdays in UTC', () => {
    assert.deepEqual(firstThree('*/5 * * * *'), ['2026-03-07T10:20:00Z', '2026-03-07T10:25:00Z', '2026-03-07T10:30:00Z'])
    assert.deepEqual(firstThree('0 9 * * mon-fri'), ['2026-03-09T09:00:00Z', '2026-03-10T09:00:00Z', '2026-03-11T09:00:00Z'])
  })

  it('descriptors and @every', () => {
    assert.deepEqual(firstThree('@hourly'), ['2026-03-07T11:00:00Z', '2026-03-07T12:00:00Z', '2026-03-07T13:00:00Z'])
    assert.deepEqual(firstThree('@monthly'), ['2026-04-01T00:00:00Z', '2026-05-01T00:00:00Z', '2026-06-01T00:00:00Z'])
    assert.deepEqual(firstThree('@every 90s'), ['2026-03-07T10:19:00Z', '2026-03-07T10:20:30Z', '2026-03-07T10:22:00Z'])
  })

  it('a day of month and a weekday both given match either, as cron does', () => {
    assert.deepEqual(firstThree('0 0 13 * 5'), ['2026-03-13T00:00:00Z', '2026-03-20T00:00:00Z', '2026-03-27T00:00:00Z'])
  })

  it('in a time zone, through a clock change', () => {
    assert.deepEqual(firstThree('TZ=Asia/Tokyo 0 9 * * *'), ['2026-03-08T00:00:00Z', '2026-03-09T00:00:00Z', '2026-03-10T00:00:00Z'])
    // 02:30 did not happen in New York on 8 March 2026: it is read as 03:30 EDT.
    assert.deepEqual(firstThree('30 2 * * *', 'America/New_York'), ['2026-03-08T07:30:00Z', '2026-03-09T06:30:00Z', '2026-03-10T06:30:00Z'])
  })

  it('refuses a schedule the API would refuse, with the parser message', () => {
    assert.throws(() => parseCronSchedule('61 * * * *'), /end of range \(61\) above maximum \(59\)/)
  })
})
