/** Upstream's text (klog) and JSON log formats, from pino's records (runtimes/node/daemon/log-formats.ts). */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { jsonFields, klogLine } from '../../../runtimes/node/daemon/log-formats.js'
import { goDuration } from '../../../core/http/filters/httplog.js'

describe('log formats', () => {
  const time = new Date(2026, 10, 23, 17, 0, 0, 123).getTime()

  it('writes klog text: severity, MMDD time in microseconds, the pid in 7 columns, the caller, the quoted message, key=value', () => {
    const line = klogLine({ level: 30, time, msg: 'HTTP', v: 3, module: 'httplog', verb: 'GET', URI: '/api?x="y"', resp: 200, hijacked: false }, 12345)
    assert.equal(line, 'I1123 17:00:00.123000   12345 httplog.ts:1] "HTTP" verb="GET" URI="/api?x=\\"y\\"" resp=200 hijacked=false\n')
  })

  it("marks warnings W and errors E, and names klog's unknown caller when there is no module", () => {
    assert.match(klogLine({ level: 40, time, msg: 'careful' }, 1), /^W1123 17:00:00\.123000 {7}1 \?\?\?:1\] "careful"\n$/)
    assert.match(klogLine({ level: 50, time, msg: 'broken', err: 'EOF' }, 1), /^E1123 .*\] "broken" err="EOF"\n$/)
  })

  it("gives upstream's JSON fields: caller, v on info messages only, err as given", () => {
    assert.deepEqual(jsonFields({ module: 'httplog', v: 3, resp: 200 }, false), { caller: 'httplog.ts:1', resp: 200, v: 3 })
    assert.deepEqual(jsonFields({ path: '/x' }, false), { caller: '???:1', path: '/x', v: 0 })
    assert.deepEqual(jsonFields({ err: 'EOF' }, true), { caller: '???:1', err: 'EOF' })
  })

  it("writes latencies in Go's duration notation", () => {
    assert.equal(goDuration(0), '0s')
    assert.equal(goDuration(0.000812), '812ns')
    assert.equal(goDuration(0.0035), '3.5µs')
    assert.equal(goDuration(1.234567), '1.234567ms')
    assert.equal(goDuration(2500), '2.5s')
    assert.equal(goDuration(63_000), '1m3s')
  })
})
