/**
 * The size of the program a pattern compiles to, estimated from its text
 * in one pass as Go's regexp/syntax estimates it from its parse tree
 * (calcSize, checked against maxSize), so that a pattern too large is
 * refused before it is compiled: compiling `x{1000}` written a hundred
 * times takes re2js a sixth of a second, written a thousand times two.
 *
 * The figures are Go's: a literal character, a class, `.`, `^`, `$` or an
 * escape 1; a concatenation the sum of its parts; an alternation the sum of
 * its branches and one per branch after the first; a capture and `*` 2 more
 * than what they hold, `+` and `?` 1 more; `x{n,m}` m copies of x and m−n
 * choices, `x{n,}` n copies and a loop; no part less than 1. Like Go's
 * parser, adjacent branches of one character or class count as one class
 * (`(?:a|b|c)` is `[a-c]`); unlike it, branches sharing a prefix are not
 * factored, so `(?:ab|ac)` counts 5 where Go counts 3.
 *
 * Syntax that RE2 refuses is left to its parser, which reports it without
 * compiling: no figure is given (undefined) for a repetition nested past
 * RE2's 1000 (`invalid repeat count`), an unbalanced parenthesis or an
 * unknown group. The pass keeps its groups on a list, not the call stack;
 * RE2's parser refuses nesting past 1000 levels (`expression nests too
 * deeply`, Go's maxHeight), also before compiling.
 */

/** RE2's bound on a repetition count, and on the product of nested ones. */
const MAX_REPEAT = 1000

interface Atom {
  size: number
  /** the product of the repetition counts within it (RE2 refuses one over 1000) */
  repeats: number
  /** one character or class, which Go's parser merges with its neighbours in an alternation */
  single: boolean
}

const ONE: Atom = { size: 1, repeats: 1, single: false }
const CHARACTER: Atom = { size: 1, repeats: 1, single: true }

interface Group {
  capture: boolean
  /** the finished branches: their sizes summed, how many, and whether the last was a single character */
  branchesSize: number
  branches: number
  lastBranchSingle: boolean
  /** the branch being read */
  size: number
  parts: number
  repeats: number
  /** the last part of the branch, which a repetition operator applies to */
  last: Atom | undefined
}

function newGroup(capture: boolean): Group {
  return { capture, branchesSize: 0, branches: 0, lastBranchSingle: false, size: 0, parts: 0, repeats: 1, last: undefined }
}

function endBranch(g: Group): void {
  const single = g.parts === 1 && g.last?.single === true
  // A run of single-character branches is one class.
  if (!(single && g.lastBranchSingle)) {
    g.branchesSize += Math.max(1, g.size)
    g.branches++
  }
  g.lastBranchSingle = single
  g.size = 0
  g.parts = 0
  g.last = undefined
}

/** What a closed group counts as a part of its parent. */
function groupAtom(g: Group): Atom {
  endBranch(g)
  const alternation = g.branchesSize + g.branches - 1
  return {
    size: Math.max(1, alternation) + (g.capture ? 2 : 0),
    repeats: g.repeats,
    single: !g.capture && g.branches === 1 && g.lastBranchSingle,
  }
}

function append(g: Group, atom: Atom): void {
  g.size += atom.size
  g.parts++
  g.repeats = Math.max(g.repeats, atom.repeats)
  g.last = atom
}

/** Replaces the branch's last part by `atom` (a repetition of it). */
function replaceLast(g: Group, atom: Atom): void {
  g.size += atom.size - (g.last?.size ?? 0)
  g.repeats = Math.max(g.repeats, atom.repeats)
  g.last = atom
}

/** `{n}`, `{n,}` or `{n,m}` at `at`: the counts and where they end; undefined when the text is a literal `{`. */
function repetition(pattern: string, at: number): { min: number; max: number; end: number } | undefined {
  const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at, at + 24))
  if (!m) return undefined
  const min = Number(m[1])
  const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3])
  return { min, max, end: at + m[0].length }
}

/** The index just past an escape starting with the backslash at `at`. */
function escapeEnd(pattern: string, at: number): number {
  const c = pattern[at + 1]
  if ((c === 'p' || c === 'P' || c === 'x') && pattern[at + 2] === '{') {
    const close = pattern.indexOf('}', at + 3)
    return close < 0 ? pattern.length : close + 1
  }
  if (c === 'x') return at + 4
  if (c === 'p' || c === 'P') return at + 3
  if (c !== undefined && c >= '0' && c <= '7') {
    let end = at + 2
    while (end < at + 4 && (pattern[end] ?? '') >= '0' && (pattern[end] ?? '') <= '7') end++
    return end
  }
  // A character outside the BMP is two code units.
  return at + 1 + (c !== undefined && c.codePointAt(0)! > 0xffff ? 2 : 1)
}

/** The index just past the class opening at `at`. */
function classEnd(pattern: string, at: number): number {
  let i = at + 1
  if (pattern[i] === '^') i++
  // A `]` first in the class is a literal.
  if (pattern[i] === ']') i++
  while (i < pattern.length) {
    const c = pattern[i]
    if (c === ']') return i + 1
    if (c === '\\') i = escapeEnd(pattern, i)
    else if (c === '[' && pattern[i + 1] === ':') {
      const close = pattern.indexOf(':]', i + 2)
      i = close < 0 ? i + 1 : close + 2
    } else i++
  }
  return pattern.length
}

/** The index just past a group's opening at `at`, whether it captures, and whether it is only flags (`(?i)`); undefined for syntax RE2 refuses. */
function groupOpening(pattern: string, at: number): { end: number; capture: boolean; flagsOnly: boolean } | undefined {
  if (pattern[at + 1] !== '?') return { end: at + 1, capture: true, flagsOnly: false }
  // (?P<name>...) and (?<name>...); (?<=...) and (?<!...) are lookbehinds
  const name = pattern[at + 2] === 'P' ? at + 3 : at + 2
  if (pattern[name] === '<' && pattern[name + 1] !== '=' && pattern[name + 1] !== '!') {
    const close = pattern.indexOf('>', name)
    return close < 0 ? undefined : { end: close + 1, capture: true, flagsOnly: false }
  }
  // (?flags) and (?flags:...)
  for (let i = at + 2; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === ')') return { end: i + 1, capture: false, flagsOnly: true }
    if (c === ':') return { end: i + 1, capture: false, flagsOnly: false }
    if (!'imsU-'.includes(c)) return undefined
  }
  return undefined
}

/** Escapes that match no character but a position. */
const EMPTY_WIDTH_ESCAPES = 'bBAz'

/** The estimated size of the program `pattern` compiles to; undefined where RE2's parser refuses the pattern anyway (see above). */
export function estimatedProgramSize(pattern: string): number | undefined {
  const stack: Group[] = [newGroup(false)]
  let top = stack[0]!
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === '(') {
      const opening = groupOpening(pattern, i)
      if (!opening) return undefined
      i = opening.end
      if (opening.flagsOnly) continue
      top = newGroup(opening.capture)
      stack.push(top)
      continue
    }
    if (c === ')') {
      if (stack.length === 1) return undefined
      const inner = groupAtom(stack.pop()!)
      top = stack[stack.length - 1]!
      append(top, inner)
      i++
      continue
    }
    if (c === '|') {
      endBranch(top)
      i++
      continue
    }
    if (c === '*' || c === '+' || c === '?') {
      if (top.last) replaceLast(top, { size: top.last.size + (c === '*' ? 2 : 1), repeats: top.last.repeats, single: false })
      i += pattern[i + 1] === '?' ? 2 : 1
      continue
    }
    if (c === '{') {
      const r = repetition(pattern, i)
      if (r && top.last) {
        const count = r.max === -1 ? r.min : r.max
        const repeats = Math.max(count, 1) * top.last.repeats
        if (count > MAX_REPEAT || repeats > MAX_REPEAT) return undefined
        const sub = top.last.size
        let size: number
        if (r.max === -1) size = r.min === 0 ? 2 + sub : 1 + r.min * sub
        else size = r.max * sub + (r.max - r.min)
        replaceLast(top, { size: Math.max(1, size), repeats, single: false })
        i = r.end + (pattern[r.end] === '?' ? 1 : 0)
        continue
      }
    }
    if (c === '\\' && pattern[i + 1] === 'Q') {
      // \Q...\E: each character a literal, the last one what a repetition applies to
      const close = pattern.indexOf('\\E', i + 2)
      const text = [...pattern.slice(i + 2, close < 0 ? pattern.length : close)]
      if (text.length > 1) append(top, { size: text.length - 1, repeats: 1, single: false })
      if (text.length > 0) append(top, CHARACTER)
      i = close < 0 ? pattern.length : close + 2
      continue
    }
    if (c === '\\') {
      append(top, EMPTY_WIDTH_ESCAPES.includes(pattern[i + 1] ?? '') ? ONE : CHARACTER)
      i = escapeEnd(pattern, i)
    } else if (c === '[') {
      append(top, CHARACTER)
      i = classEnd(pattern, i)
    } else {
      append(top, c === '^' || c === '$' ? ONE : CHARACTER)
      i += c.codePointAt(0)! > 0xffff ? 2 : 1
    }
  }
  // an unclosed group: RE2 refuses it (`missing closing )`)
  if (stack.length > 1) return undefined
  return groupAtom(top).size
}
