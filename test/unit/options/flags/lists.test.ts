import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  parseKeyValue,
  parseKeyValuePairs,
  parseMetricLabels,
  parseNamedCertKey,
  parseRepeatedString,
  parseStringList,
  parseVModule,
  readCsvRecord,
} from '../../../../core/options/flags/lists.js'

describe('list flag values', () => {
  it('splits comma lists with CSV rules, as pflag string slices do', () => {
    const cases: [string, string[] | string][] = [
      ['a,b,c', ['a', 'b', 'c']],
      ['a', ['a']],
      ['a,,b', ['a', '', 'b']],
      ['a,', ['a', '']],
      [' a, b', [' a', ' b']],
      ['"x,y",z', ['x,y', 'z']],
      ['"say ""hi""",z', ['say "hi"', 'z']],
      ['a"b', 'parse error on line 1, column 2: bare " in non-quoted-field'],
      ['"a"b', 'parse error on line 1, column 4: extraneous or missing " in quoted-field'],
      ['"open', 'parse error on line 1, column 6: extraneous or missing " in quoted-field'],
    ]
    for (const [input, expected] of cases) {
      assert.deepEqual(readCsvRecord(input), typeof expected === 'string' ? { reason: expected } : { value: expected }, input)
    }
  })

  it('replaces the default on first use and adds on repeats; an empty value gives none', () => {
    assert.deepEqual(parseStringList('a,b', undefined), { value: ['a', 'b'] })
    assert.deepEqual(parseStringList('c', ['a', 'b']), { value: ['a', 'b', 'c'] })
    assert.deepEqual(parseStringList('', undefined), { value: [] })
    assert.deepEqual(parseStringList('', ['a']), { value: ['a'] })
  })

  it('keeps each use of a repeatable flag whole, commas included', () => {
    assert.deepEqual(parseRepeatedString('https://a,b', undefined), { value: ['https://a,b'] })
    assert.deepEqual(parseRepeatedString('second', ['first']), { value: ['first', 'second'] })
  })

  it('reads key=value pairs; a key without a value gets an empty one', () => {
    assert.deepEqual(parseKeyValuePairs('apps/v1=true, api/all=false', undefined), { value: { 'apps/v1': 'true', 'api/all': 'false' } })
    assert.deepEqual(parseKeyValuePairs('api/alpha,,', undefined), { value: { 'api/alpha': '' } })
    assert.deepEqual(parseKeyValuePairs('a=2', { a: '1', b: '1' }), { value: { a: '2', b: '1' } })
  })

  it('reads one key=value pair per use when the value may hold commas', () => {
    assert.deepEqual(parseKeyValue('hd=example.com,example.org', undefined), { value: { hd: 'example.com,example.org' } })
    assert.deepEqual(parseKeyValue('b=2', { a: '1' }), { value: { a: '1', b: '2' } })
    assert.deepEqual(parseKeyValue('nokey', undefined), { reason: 'malformed pair, expect string=string' })
  })

  it("reads metric label allow-lists, quoted or not, several per use", () => {
    const cases: [string, Record<string, string[]>][] = [
      ['metric1,label1=v1,v2', { 'metric1,label1': ['v1', 'v2'] }],
      ["metric1,label1='v1,v2,v3'", { 'metric1,label1': ['v1', 'v2', 'v3'] }],
      ["metric1,label1='v1,v2', metric1,label2='v3' metric2,label1=v4", { 'metric1,label1': ['v1', 'v2'], 'metric1,label2': ['v3'], 'metric2,label1': ['v4'] }],
      ['m1,l1=a,b,m2,l2=c', { 'm1,l1': ['a', 'b'], 'm2,l2': ['c'] }],
      ['"m1,l1=a,b","m2,l2=c"', { 'm1,l1': ['a', 'b'], 'm2,l2': ['c'] }],
      ['apiserver_request_total,code=', { 'apiserver_request_total,code': [] }],
    ]
    for (const [input, expected] of cases) assert.deepEqual(parseMetricLabels(input, undefined), { value: expected }, input)
    assert.deepEqual(parseMetricLabels('m2,l=x', { 'm1,l': ['a'] }), { value: { 'm1,l': ['a'], 'm2,l': ['x'] } })
    const reason = 'must be a list of <MetricName>,<LabelName>=<allowed_value>,<allowed_value>... entries'
    for (const bad of ['', 'metric=v1', 'junk metric,label=v', '1metric,label=v']) assert.deepEqual(parseMetricLabels(bad, undefined), { reason }, bad)
  })

  it('reads --vmodule pattern=N settings', () => {
    assert.deepEqual(parseVModule('server*=4,handler.go=2,', undefined), {
      value: [
        { pattern: 'server*', verbosity: 4 },
        { pattern: 'handler.go', verbosity: 2 },
      ],
    })
    assert.deepEqual(parseVModule('a=1', [{ pattern: 'z', verbosity: 9 }]), {
      value: [
        { pattern: 'z', verbosity: 9 },
        { pattern: 'a', verbosity: 1 },
      ],
    })
    assert.deepEqual(parseVModule('server', undefined), { reason: '"server" does not have the pattern=N format' })
    assert.deepEqual(parseVModule('=3', undefined), { reason: '"=3" does not have the pattern=N format' })
    assert.deepEqual(parseVModule('a=b=1', undefined), { reason: '"a=b=1" does not have the pattern=N format' })
    assert.deepEqual(parseVModule('a=x', undefined), { reason: 'parsing verbosity in "a=x": strconv.ParseUint: parsing "x": invalid syntax' })
    assert.deepEqual(parseVModule('a=2147483648', undefined), {
      reason: 'parsing verbosity in "a=2147483648": strconv.ParseUint: parsing "2147483648": invalid syntax',
    })
  })

  it('reads --tls-sni-cert-key pairs with optional domain patterns', () => {
    assert.deepEqual(parseNamedCertKey('example.crt,example.key', undefined), {
      value: [{ certFile: 'example.crt', keyFile: 'example.key', names: [] }],
    })
    assert.deepEqual(parseNamedCertKey('foo.crt,foo.key:*.foo.com, foo.com', [{ certFile: 'a', keyFile: 'b', names: [] }]), {
      value: [
        { certFile: 'a', keyFile: 'b', names: [] },
        { certFile: 'foo.crt', keyFile: 'foo.key', names: ['*.foo.com', 'foo.com'] },
      ],
    })
    assert.deepEqual(parseNamedCertKey('foo.crt,foo.key:', undefined), { reason: 'empty names list is not allowed' })
    assert.deepEqual(parseNamedCertKey('foo.crt', undefined), { reason: 'expected comma separated certificate and key file paths' })
    assert.deepEqual(parseNamedCertKey('a,b,c', undefined), { reason: 'expected comma separated certificate and key file paths' })
  })
})
