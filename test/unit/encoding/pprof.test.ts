import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { gzipSync } from 'node:zlib'
import { encodeProfile, encodeProfileGzip, type SampledProfile, type StackFrame } from '../../../core/encoding/pprof.js'
import { renderProfileText } from '../../../core/encoding/pprof-text.js'
import { decodePprof } from '../../helpers/pprof.js'

const frame = (functionName: string, line: number): StackFrame => ({ functionName, fileName: '/srv/app.js', line, column: 3, startLine: line })
const handle = frame('handle', 10)
const decode = frame('decode', 40)
const main = frame('main', 1)

const cpu: SampledProfile = {
  sampleTypes: [
    { type: 'samples', unit: 'count' },
    { type: 'cpu', unit: 'nanoseconds' },
  ],
  samples: [
    { stack: [decode, handle, main], values: [3, 3_000_000] },
    { stack: [handle, main], values: [1, 1_000_000] },
  ],
  periodType: { type: 'cpu', unit: 'nanoseconds' },
  period: 1_000_000,
  timeNanos: 1_700_000_000_000_000_000,
  durationNanos: 2_000_000_000,
  comments: ['taken in a test'],
  defaultSampleType: 'cpu',
}

describe('pprof profile encoding', () => {
  it('writes a gzip-compressed profile.proto that reads back with the same stacks, values and metadata', async () => {
    const gz = await encodeProfileGzip(cpu)
    assert.deepEqual([gz[0], gz[1]], [0x1f, 0x8b], 'gzip magic')
    const read = decodePprof(gz)
    assert.deepEqual(read.sampleTypes, cpu.sampleTypes)
    assert.deepEqual(
      read.samples.map((s) => ({ stack: s.stack.map((f) => `${f.functionName} ${f.fileName}:${f.line}`), values: s.values })),
      [
        { stack: ['decode /srv/app.js:40', 'handle /srv/app.js:10', 'main /srv/app.js:1'], values: [3, 3_000_000] },
        { stack: ['handle /srv/app.js:10', 'main /srv/app.js:1'], values: [1, 1_000_000] },
      ],
    )
    assert.deepEqual(read.periodType, cpu.periodType)
    assert.equal(read.period, 1_000_000)
    assert.equal(read.timeNanos, cpu.timeNanos)
    assert.equal(read.durationNanos, 2_000_000_000)
    assert.deepEqual(read.comments, ['taken in a test'])
    assert.equal(read.defaultSampleType, 'cpu')
  })

  it('writes each string once, starting the table with ""', () => {
    const read = decodePprof(gzipOf(encodeProfile(cpu)))
    assert.equal(read.strings[0], '')
    assert.equal(read.strings.filter((s) => s === '/srv/app.js').length, 1)
    assert.equal(read.strings.filter((s) => s === 'handle').length, 1)
  })

  it('refuses a sample whose values do not match the sample types, writing nothing', () => {
    assert.throws(() => encodeProfile({ ...cpu, samples: [{ stack: [main], values: [1] }] }), /a sample has 1 values for 2 sample types/)
  })

  it('renders ?debug=1 text with the totals and the largest sample first', () => {
    const text = renderProfileText('profile', cpu)
    assert.match(text, /^profile profile: 2 stacks; samples\/count 4, cpu\/nanoseconds 4000000\n/)
    assert.ok(text.indexOf('3 3000000 @\n#\tdecode /srv/app.js:40:3') < text.indexOf('1 1000000 @'))
  })
})

function gzipOf(bytes: Uint8Array): Uint8Array {
  // node:zlib only in the test: the route's gzip is CompressionStream, tested above.
  return new Uint8Array(gzipSync(bytes))
}
