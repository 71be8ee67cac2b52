/**
 * A pattern whose program would be too large is refused from its text,
 * before re2js compiles it (Go's parser refuses it from its parse tree the
 * same way): compiling one of a million instructions held the thread for
 * seconds. The proof counts compilations instead of timing them.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { RE2JS } from 're2js'
import { estimatedProgramSize } from '../../../core/regex/program-size.js'
import { regexError } from '../../../core/regex/re2.js'

let compiled: string[] = []
const original = RE2JS.compile.bind(RE2JS)

describe('patterns too large to compile', () => {
  before(() => {
    RE2JS.compile = ((pattern: string, flags?: number) => {
      compiled.push(pattern)
      return original(pattern, flags)
    }) as typeof RE2JS.compile
  })
  after(() => {
    RE2JS.compile = original
  })

  it('refuses a million instructions in 7000 characters with Go\'s message, without compiling them', () => {
    compiled = []
    const pattern = 'b{1000}'.repeat(1000)
    assert.equal(regexError(pattern), `error parsing regexp: expression too large: \`${pattern}\``)
    assert.deepEqual(compiled, [])
  })

  it('counts every branch of an alternation: 2000 distinct repeated branches are too large', () => {
    compiled = []
    const pattern = `(?:${Array.from({ length: 2000 }, (_, i) => `${String.fromCharCode(0x4e00 + i)}{1000}`).join('|')})`
    assert.match(regexError(pattern) ?? '', /^error parsing regexp: expression too large: /)
    assert.deepEqual(compiled, [])
  })

  it('compiles a pattern within the limit, and one whose single-character branches make one class', () => {
    compiled = []
    assert.equal(regexError('c{1000}'.repeat(99)), undefined)
    // 26 branches of one letter are a class, as Go's parser makes them: 50 repetitions of 1000 classes
    const letters = `(?:${[...'abcdefghijklmnopqrstuvwxyz'].join('|')}){1000}`.repeat(50)
    assert.equal(estimatedProgramSize(letters), 50_000)
    assert.equal(regexError(letters), undefined)
    assert.equal(compiled.length, 2)
  })

  it('leaves syntax errors to the parser, and refuses nesting past 1000 levels as Go does', () => {
    assert.equal(regexError('(d{1000}){2}'), 'error parsing regexp: invalid repeat count: `{2}`')
    assert.equal(regexError('(?=x)'), 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`')
    assert.equal(regexError(`${'('.repeat(1001)}e${')'.repeat(1001)}`), 'error parsing regexp: expression nests too deeply')
    assert.equal(regexError(`${'('.repeat(999)}e${')'.repeat(999)}`), undefined)
  })

  it('never estimates far below the compiled size, so what it lets through compiles within about the limit', () => {
    let seed = 7
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed % n
    }
    const atoms = ['a', 'bc', '.', '^', '$', '[a-z]', '[^]x]', '\\d', '\\pL', '\\p{Greek}', '\\x{263a}', '\\Qa.b\\E', '[[:alpha:]]', '\\101', '😀', '{', ']', '(?i)', '\\b']
    const repeats = ['', '', '*', '+', '?', '*?', '{2}', '{0}', '{1,3}', '{0,}', '{3,}', '{5}?', '{10}']
    const generate = (depth: number): string => {
      let out = ''
      for (let i = random(4); i >= 0; i--) {
        const group = depth > 0 && random(10) < 3
        const branches = () => Array.from({ length: 1 + random(3) }, () => (random(5) === 0 ? '' : generate(depth - 1))).join('|')
        const atom = group ? `${['(', '(?:', '(?P<n>', '(?i:'][random(4)]}${branches()})` : (atoms[random(atoms.length)] ?? '')
        out += atom + (repeats[random(repeats.length)] ?? '')
      }
      return out
    }
    let checked = 0
    for (let n = 0; n < 3000; n++) {
      const pattern = generate(3)
      let size: number
      try {
        size = original(pattern).programSize()
      } catch {
        continue
      }
      const estimate = estimatedProgramSize(pattern)
      assert.ok(estimate !== undefined && estimate * 1.25 + 5 >= size, `${pattern}: estimated ${estimate}, compiled ${size}`)
      checked++
    }
    assert.ok(checked > 2000)
  })
})
