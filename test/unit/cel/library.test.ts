import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAndCheck } from '../../../core/cel/checked.js'
import { kubernetesEnvironment } from '../../../core/cel/library/index.js'
import { CostMeter, PER_CALL_LIMIT, runMetered } from '../../../core/cel/meter.js'

const env = kubernetesEnvironment().registerVariable('s', 'string').registerVariable('items', 'list<dyn>')

/** Compiles (which must succeed) and runs `expression` over `vars`. */
function run(expression: string, vars: Record<string, unknown> = {}): unknown {
  const outcome = parseAndCheck(env, expression)
  assert.ok('parsed' in outcome, `${expression}: ${'issue' in outcome ? outcome.issue : ''}`)
  const value = runMetered(outcome.parsed, { s: '', items: [], ...vars }, new CostMeter(PER_CALL_LIMIT))
  return value instanceof Map ? Object.fromEntries(value) : value
}

function issue(expression: string): string {
  const outcome = parseAndCheck(env, expression)
  assert.ok('issue' in outcome, `${expression} compiles`)
  return outcome.issue
}

describe("Kubernetes' CEL libraries at 1.32", () => {
  const cases: [string, unknown][] = [
    // regex, global and member forms, on RE2
    ["matches('v1.2', '^v1\\\\.[0-4]')", true],
    ["'v1.9'.matches('^v1\\\\.[0-4]')", false],
    ["'abc123def45'.find('[0-9]+')", '123'],
    ["'abc'.find('[0-9]+')", ''],
    ["'a1b22c333'.findAll('[0-9]+')", ['1', '22', '333']],
    ["'a1b22c333'.findAll('[0-9]+', 2)", ['1', '22']],
    ["'Straße'.matches('^\\\\pL+$')", true],
    // lists
    ['[1, 2, 3].isSorted() && ![2, 1].isSorted()', true],
    ['[1, 2, 3].sum()', 6n],
    ['[1.5, 2.5].sum()', 4],
    ["['b', 'a', 'c'].min() + ['b', 'a', 'c'].max()", 'ac'],
    ["['a', 'b', 'a'].indexOf('a') + ['a', 'b', 'a'].lastIndexOf('a') + ['a'].indexOf('z')", 1n],
    // strings extension, version 2
    ["'hello'.charAt(1) + 'a-b-c'.replace('-', '+', 1)", 'ea+b-c'],
    // format's arguments are one list literal: mixed types need dyn(), as upstream's homogeneous literals demand
    ["'%s has %d items at %.2f'.format([dyn('list'), 3, 1.5])", 'list has 3 items at 1.50'],
    ["strings.quote('say \"hi\"\\n')", '"say \\"hi\\"\\n"'],
    // ASCII alone changes case; trim is Go's TrimSpace; substring counts code points (cel-go's, not the library's own)
    ["'ÀBc'.lowerAscii() + ' ' + 'àbC'.upperAscii()", 'Àbc àBC'],
    ["'\\u0085 x\\u3000'.trim() + '|' + '\\ufeffx'.trim()", 'x|\ufeffx'],
    ["'😀abc'.substring(1) + '/' + '😀abc'.substring(0, 2)", 'abc/😀a'],
    ["dyn('AÀ').lowerAscii()", 'aÀ'],
    ["'😀abc😀'.indexOf('a') + '😀abc😀'.lastIndexOf('😀') + 'hello'.lastIndexOf('lo', 4) + 'hello'.indexOf('', 9)", 17n],
    ["dyn('abc').indexOf('c') + dyn([1, 2]).lastIndexOf(2) + dyn([1]).indexOf(3)", 2n],
    // sets
    ["sets.contains(['a', 'b'], ['a']) && sets.intersects([1, 2], [2, 3]) && sets.equivalent([1, 2], [2, 1, 2])", true],
    // URLs
    ["url('https://example.com:8443/a%20b?x=1&x=2').getHost()", 'example.com:8443'],
    ["url('https://[::1]:80/').getHostname() + url('https://[::1]:80/').getPort()", '::180'],
    ["url('https://example.com/a%20b?x=1&x=2').getQuery()", { x: ['1', '2'] }],
    ["isURL('/just/a/path') && !isURL('not a url') && !isURL('mailto:a@b')", true],
    // IP and CIDR
    ["isIP('10.0.0.1') && isIP('2001:db8::1') && !isIP('010.0.0.1') && !isIP('::ffff:1.2.3.4')", true],
    ["string(ip('2001:0db8:0000:0000:0000:0000:0000:0001'))", '2001:db8::1'],
    ["ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')", true],
    ["ip('127.0.0.1').isLoopback() && ip('fe80::1').isLinkLocalUnicast() && ip('8.8.8.8').isGlobalUnicast() && ip('::1').family() == 6", true],
    ["cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", true],
    ["cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", true],
    ["string(cidr('192.168.1.7/24').masked()) + ' ' + string(cidr('192.168.1.7/24').ip())", '192.168.1.0/24 192.168.1.7'],
    ["cidr('::1/128').prefixLength()", 128n],
    // quantity
    ["quantity('1Gi').isGreaterThan(quantity('1000Mi')) && quantity('500m').isLessThan(quantity('1'))", true],
    ["quantity('1.5').add(1).compareTo(quantity('2500m'))", 0n],
    ["quantity('2k').sub(quantity('500')).asInteger()", 1500n],
    ["isQuantity('10Mi') && !isQuantity('ten') && !quantity('1.5').isInteger() && quantity('-3').sign() == -1", true],
    // formats
    ["!format.dns1123Label().validate('my-name').hasValue()", true],
    ["format.dns1123Label().validate('My_Name').value().size()", 1n],
    ["format.named('uuid').value().validate('not-a-uuid').hasValue() && !format.named('nope').hasValue()", true],
    ["format.dns1123LabelPrefix().validate('gen-').hasValue()", false],
    // an optional is never equal to null, yet the comparison type-checks (the Gateway API writes it)
    ["format.dns1123Label().validate('ok') == null", false],
    // two-variable comprehensions (1.32)
    ['[10, 20, 30].all(i, v, v == (i + 1) * 10)', true],
    ["{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)", true],
    ['[1, 2, 3].existsOne(i, v, i == v)', false],
    ['[1, 2, 3].transformList(i, v, i > 0, v * 10)', [20n, 30n]],
    ["{'a': 1, 'b': 2}.transformMap(k, v, v * 2)", { a: 2n, b: 4n }],
    ["{'a': 1}.transformMapEntry(k, v, {k + k: v})", { aa: 1n }],
    // has() on an indexed operand, as cel-go allows
    ['has(items[0].name) && !has(items[0].other)', true],
    // mixed literals join to dyn when one element is dyn
    ["[items[0].name, 'b'].size()", 2n],
  ]
  for (const [expression, want] of cases) {
    it(`${expression} is ${JSON.stringify(want, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}` : v))}`, () => {
      assert.deepEqual(run(expression, { items: [{ name: 'x' }] }), want)
    })
  }

  it('runs matches() in linear time: a pathological pattern answers', () => {
    assert.equal(run("s.matches('^(a+)+$')", { s: `${'a'.repeat(5000)}!` }), false)
    assert.equal(run("s.findAll('a*b').size()", { s: 'ab'.repeat(5000) }), 5000n)
  })

  it('refuses at compile time what upstream refuses, in cel-go words', () => {
    assert.equal(issue("s.matches('(?=a)')"), "ERROR: <input>:1:11: invalid matches argument\n | s.matches('(?=a)')\n | ..........^")
    assert.equal(issue("s.matches('(a)\\\\1')"), "ERROR: <input>:1:11: invalid matches argument\n | s.matches('(a)\\\\1')\n | ..........^")
    assert.equal(issue("matches('(', s)"), "ERROR: <input>:1:9: invalid matches argument\n | matches('(', s)\n | ........^")
    assert.equal(issue("[1, 'a']"), "ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a']\n | ....^")
    assert.equal(issue("{'a': 1, 'b': 'c'}"), "ERROR: <input>:1:15: expected type 'int' but found 'string'\n | {'a': 1, 'b': 'c'}\n | ..............^")
    assert.equal(issue("size(['a', 1]) == 2"), "ERROR: <input>:1:12: expected type 'string' but found 'int'\n | size(['a', 1]) == 2\n | ...........^")
    // Whatever a format() call holds is exempt, as cel-go's strings extension declares.
    assert.equal(run("'%s %d %s'.format(['a', 1, [2, 'b']])"), 'a 1 [2, "b"]')
    assert.equal(issue("'abc'.reverse()"), "ERROR: <input>:1:14: undeclared reference to 'reverse' (in container '')\n | 'abc'.reverse()\n | .............^")
    assert.match(issue("1.matches('a')"), /^ERROR: <input>:1:\d+: found no matching overload for 'matches' applied to 'int\.\(string\)'\n \| 1\.matches\('a'\)\n \| \.+\^$/)
    // The marker counts code points, full-width under one of several bytes in UTF-8; a tab shows as a space.
    assert.equal(issue("'é' == 1"), "ERROR: <input>:1:5: found no matching overload for '_==_' applied to '(string, int)'\n | 'é' == 1\n | .\uff0e..^")
    assert.equal(issue("\t1 == 'a'"), "ERROR: <input>:1:4: found no matching overload for '_==_' applied to '(int, string)'\n |  1 == 'a'\n | ...^")
    assert.equal(issue("1 == 'é'.size() || 'é' == 1"), "ERROR: <input>:1:24: found no matching overload for '_==_' applied to '(string, int)'\n | 1 == 'é'.size() || 'é' == 1\n | ......\uff0e.............\uff0e..^")
    assert.equal(issue("semver('1.0.0')"), "ERROR: <input>:1:7: undeclared reference to 'semver' (in container '')\n | semver('1.0.0')\n | ......^")
  })

  it("refuses a substring or a search out of range in cel-go's words", () => {
    const failure = (expression: string) => {
      const outcome = parseAndCheck(env, expression)
      assert.ok('parsed' in outcome, expression)
      try {
        runMetered(outcome.parsed, { s: 'hello', items: [] }, new CostMeter(PER_CALL_LIMIT))
      } catch (err) {
        return (err as Error).message
      }
      return 'no error'
    }
    assert.equal(failure('s.substring(6)'), 'index out of range: 6')
    assert.equal(failure('s.substring(-1, 2)'), 'index out of range: -1')
    assert.equal(failure('s.substring(1, 9)'), 'index out of range: 9')
    assert.equal(failure('s.substring(3, 2)'), 'invalid substring range. start: 3, end: 2')
    assert.equal(failure("s.indexOf('l', 5)"), 'index out of range: 5')
    assert.equal(failure("''.indexOf('a')"), 'index out of range: 0', "cel-go's own quirk")
    assert.equal(failure("''.lastIndexOf('a')"), 'index out of range: -1')
    assert.equal(issue("[1].indexOf('a')"), "ERROR: <input>:1:12: found no matching overload for 'indexOf' applied to 'list(int).(string)'\n | [1].indexOf('a')\n | ...........^")
    assert.equal(issue("'a'.indexOf(1)"), "ERROR: <input>:1:12: found no matching overload for 'indexOf' applied to 'string.(int)'\n | 'a'.indexOf(1)\n | ...........^")
    assert.equal(issue("s.substring('1')"), "ERROR: <input>:1:12: found no matching overload for 'substring' applied to 'string.(string)'\n | s.substring('1')\n | ...........^")
    assert.equal(issue('1.lowerAscii()'), "ERROR: <input>:1:13: found no matching overload for 'lowerAscii' applied to 'int.()'\n | 1.lowerAscii()\n | ............^")
  })

  it('reports a pattern RE2 refuses at run time with Go\'s words', () => {
    const outcome = parseAndCheck(env, 's.matches(items[0].name)')
    assert.ok('parsed' in outcome)
    assert.throws(() => runMetered(outcome.parsed, { s: 'a', items: [{ name: '(?!a)' }] }, new CostMeter(PER_CALL_LIMIT)), {
      message: 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`',
    })
  })
})

describe('string functions over a string of three million characters', () => {
  it('quote, format and replace give what they gave a character at a time', async () => {
    const { quote, replace } = await import('../../../core/cel/library/strings.js')
    const { formatString } = await import('../../../core/cel/library/string-format.js')
    // cel-go's strings.quote: CEL's escapes alone, other control characters as they are, a lone surrogate as U+FFFD.
    assert.equal(quote('a"b\\c\n\r\t\x07\b\f\v\x01\x1f\x7f é 😀 \ud800 \udc00x'), '"a\\"b\\\\c\\n\\r\\t\\a\\b\\f\\v\x01\x1f\x7f é 😀 \ufffd \ufffdx"')
    assert.equal(replace('a.b.c', '.', '--', -1n), 'a--b--c')
    assert.equal(replace('a.b.c', '.', '--', 1n), 'a--b.c')
    assert.equal(replace('aaaa', 'aa', 'b', -1n), 'bb')
    assert.equal(formatString('x %s y %d %% z %.2f', ['A', 3n, 1.5]), 'x A y 3 % z 1.50')
    assert.equal(formatString('%.10f|%.0f|%e|%.3e|%f', [1.5, 2.4, 1234.5, 0.5, 'NaN']), '1.5000000000|2|1.234500e+03|5.000e-01|NaN')
    assert.throws(() => formatString('%.f', [1.5]), /unrecognized formatting clause "\."/)
    assert.equal(formatString('%x %X %x', ['hé\u0000', 'ÿ', 255n]), '68c3a900 C3BF ff')
    assert.equal(formatString('%x', ['\u00ff'.repeat(10_000)]), 'c3bf'.repeat(10_000))
    const big = 'abcdefgh'.repeat(360_000)
    assert.equal(quote(big).length, big.length + 2)
    assert.equal(formatString(`${big}%s`, ['!']).length, big.length + 1)
    assert.equal(replace(big, 'a', 'bb', -1n).length, big.length + 360_000)
  })
})
