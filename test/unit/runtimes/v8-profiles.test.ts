import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cpuProfileFromV8, heapProfileFromV8, type V8CallFrame } from '../../../runtimes/node/daemon/v8-profiles.js'

const at = (functionName: string, lineNumber: number, url = 'file:///srv/app%20one.js'): V8CallFrame => ({ functionName, url, lineNumber, columnNumber: 4 })

describe('V8 profiles as pprof samples', () => {
  it('counts CPU samples per stack with the time since the sample before, leaving out (idle)', () => {
    const profile = cpuProfileFromV8(
      {
        nodes: [
          { id: 1, callFrame: at('(root)', -1, ''), children: [2, 4] },
          { id: 2, callFrame: at('main', 0), children: [3] },
          { id: 3, callFrame: at('', 9) },
          { id: 4, callFrame: at('(idle)', -1, '') },
        ],
        startTime: 1000,
        endTime: 5000,
        samples: [3, 4, 3, 2],
        timeDeltas: [100, 900, 1000, 1000],
      },
      1_700_000_000_000,
      1000,
    )
    assert.deepEqual(
      profile.samples.map((s) => ({ stack: s.stack.map((f) => `${f.functionName} ${f.fileName}:${f.line}:${f.column}`), values: s.values })),
      [
        { stack: ['(anonymous) /srv/app one.js:10:5', 'main /srv/app one.js:1:5'], values: [2, 1_100_000] },
        { stack: ['main /srv/app one.js:1:5'], values: [1, 1_000_000] },
      ],
    )
    assert.equal(profile.durationNanos, 4_000_000)
    assert.equal(profile.period, 1_000_000)
    assert.equal(profile.timeNanos, 1_700_000_000_000 * 1e6)
  })

  it('gives each heap node with live bytes a sample over its stack, leaf first, without the root', () => {
    const profile = heapProfileFromV8(
      {
        callFrame: at('(root)', -1, ''),
        selfSize: 0,
        children: [
          {
            callFrame: at('main', 0),
            selfSize: 524288,
            children: [{ callFrame: at('load', 20, 'node:fs'), selfSize: 1048576, children: [] }],
          },
        ],
      },
      1_700_000_000_000,
      524288,
    )
    assert.deepEqual(profile.sampleTypes, [{ type: 'inuse_space', unit: 'bytes' }])
    assert.deepEqual(
      profile.samples.map((s) => ({ stack: s.stack.map((f) => `${f.functionName} ${f.fileName}`), values: s.values })),
      [
        { stack: ['main /srv/app one.js'], values: [524288] },
        { stack: ['load node:fs', 'main /srv/app one.js'], values: [1048576] },
      ],
    )
  })
})
