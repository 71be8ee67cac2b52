/**
 * Whether a compiled pattern matches, as work with checkpoints and a count
 * of the work really done. re2js runs a match in one call that cannot be
 * paused, and its NFA costs up to the program's size for each character:
 * a 600-instruction pattern over 40,000 characters held the thread 0.7 s,
 * and a list of such values held it for as many times that. This runs the
 * same program on the same algorithm (Thompson's NFA, one thread per
 * instruction at most, as Go's regexp and re2js do), without submatches,
 * so that a long match lets other requests run between its slices and is
 * charged for the threads it actually steps, not for its worst case.
 *
 * The program is re2js's own (the one RE2JS.compile built), read through a
 * narrow view of its instructions; their opcodes are re2js's. The unit
 * tests check the answers against re2js's on many patterns and inputs.
 */
import type { RE2JS } from 're2js'
import { type Checkpointed } from '../machinery/time-slice.js'

/** re2js's instruction opcodes (Inst.ALT ... Inst.LB_CHECK). */
const ALT = 1
const ALT_MATCH = 2
const CAPTURE = 3
const EMPTY_WIDTH = 4
const MATCH = 6
const NOP = 7
const RUNE = 8
const RUNE1 = 9
const RUNE_ANY = 10
const RUNE_ANY_NOT_NL = 11

/** Go's syntax.EmptyOp flags, which EMPTY_WIDTH instructions test. */
const BEGIN_LINE = 1
const END_LINE = 2
const BEGIN_TEXT = 4
const END_TEXT = 8
const WORD_BOUNDARY = 16
const NO_WORD_BOUNDARY = 32

interface Instruction {
  readonly op: number
  readonly out: number
  readonly arg: number
  readonly runes: ArrayLike<number>
  matchRune(rune: number): boolean
}

interface Program {
  readonly inst: readonly Instruction[]
  readonly start: number
  /** Lookbehind instructions, an extension RE2 does not have (the patterns here cannot contain any). */
  readonly numLb: number
}

/** The compiled program behind `compiled`, or undefined when it uses what this matcher does not run. */
function programOf(compiled: RE2JS): Program | undefined {
  const prog = (compiled.re2() as unknown as { prog?: Program }).prog
  return prog && Array.isArray(prog.inst) && prog.numLb === 0 ? prog : undefined
}

/** Whether a given instruction set can run here (tests use it to check the program's view). */
export function canStep(compiled: RE2JS): boolean {
  return programOf(compiled) !== undefined
}

/** Threads stepped (instructions visited) between two checkpoints: some tens of microseconds of work. */
export const STEPS_PER_CHECKPOINT = 4096

/** Where a match's work is counted: the per-match and per-request bounds (see re2.ts). */
export interface WorkCounter {
  /** Counts `units` of work; throws when a bound is passed. */
  charge(units: number): void
}

const isWordRune = (r: number): boolean => (r >= 48 && r <= 57) || (r >= 65 && r <= 90) || (r >= 97 && r <= 122) || r === 95

/** The empty-width assertions that hold between `before` and `after` (-1 at either end of the text). */
function context(before: number, after: number): number {
  let flags = 0
  if (before < 0) flags |= BEGIN_TEXT | BEGIN_LINE
  else if (before === 10) flags |= BEGIN_LINE
  if (after < 0) flags |= END_TEXT | END_LINE
  else if (after === 10) flags |= END_LINE
  flags |= isWordRune(before) !== isWordRune(after) ? WORD_BOUNDARY : NO_WORD_BOUNDARY
  return flags
}

/** A sparse set of instruction numbers, cleared in constant time. */
class ThreadSet {
  readonly dense: Int32Array
  private readonly sparse: Int32Array
  size = 0

  constructor(capacity: number) {
    this.dense = new Int32Array(capacity)
    this.sparse = new Int32Array(capacity)
  }

  has(pc: number): boolean {
    const at = this.sparse[pc]!
    return at < this.size && this.dense[at] === pc
  }

  add(pc: number): void {
    this.sparse[pc] = this.size
    this.dense[this.size++] = pc
  }
}

/**
 * Whether `compiled` matches anywhere in `input` (unanchored, as Go's
 * MatchString), charging `counter` for every thread visited and yielding
 * every STEPS_PER_CHECKPOINT of them. Undefined when the program is not
 * one this matcher runs (the caller then matches at once).
 */
export function* steppedTest(compiled: RE2JS, input: string, counter: WorkCounter): Checkpointed<boolean | undefined> {
  const prog = programOf(compiled)
  if (!prog) return undefined
  const { inst } = prog
  let current = new ThreadSet(inst.length)
  let next = new ThreadSet(inst.length)
  const stack = new Int32Array(inst.length + 1)
  let uncharged = 0
  // A pattern that must start at the beginning of the text (`^` outside multi-line mode) stops once its threads die.
  const anchored = startsWithBeginText(prog)

  /** Adds `pc` and every instruction reachable from it without reading a character. True when one is MATCH. */
  const follow = (set: ThreadSet, pc: number, flags: number): boolean => {
    let top = 0
    stack[top++] = pc
    while (top > 0) {
      let at = stack[--top]!
      while (at !== 0 && !set.has(at)) {
        set.add(at)
        uncharged++
        const i = inst[at]!
        switch (i.op) {
          case ALT:
          case ALT_MATCH:
            stack[top++] = i.arg
            at = i.out
            break
          case EMPTY_WIDTH:
            at = (i.arg & ~flags) === 0 ? i.out : 0
            break
          case NOP:
          case CAPTURE:
            at = i.out
            break
          case MATCH:
            return true
          default:
            // FAIL ends the thread; a rune instruction waits in the set for the next character.
            at = 0
        }
      }
    }
    return false
  }

  /** Charges what is left to count, with the answer. */
  const done = (matched: boolean): boolean => {
    counter.charge(uncharged)
    return matched
  }

  let pos = 0
  let before = -1
  for (;;) {
    const rune = pos < input.length ? input.codePointAt(pos)! : -1
    const width = rune > 0xffff ? 2 : 1
    const flags = context(before, rune)
    if (current.size === 0 && anchored && pos > 0) return done(false)
    if (pos === 0 || !anchored) {
      if (follow(current, prog.start, flags)) return done(true)
    }
    if (rune < 0) return done(false)
    const after = pos + width < input.length ? input.codePointAt(pos + width)! : -1
    const nextFlags = context(rune, after)
    for (let j = 0; j < current.size; j++) {
      const i = inst[current.dense[j]!]!
      let advances: boolean
      switch (i.op) {
        case RUNE:
          advances = i.matchRune(rune)
          break
        case RUNE1:
          advances = rune === i.runes[0]
          break
        case RUNE_ANY:
          advances = true
          break
        case RUNE_ANY_NOT_NL:
          advances = rune !== 10
          break
        default:
          advances = false
      }
      uncharged++
      if (advances && follow(next, i.out, nextFlags)) return done(true)
    }
    ;[current, next] = [next, current]
    next.size = 0
    before = rune
    pos += width
    if (uncharged >= STEPS_PER_CHECKPOINT) {
      counter.charge(uncharged)
      uncharged = 0
      yield
    }
  }
}

/** Whether every path from the start must pass `\A` (or `^` outside multi-line mode) before anything else. */
function startsWithBeginText(prog: Program): boolean {
  let at = prog.start
  for (;;) {
    const i = prog.inst[at]!
    if (i.op === NOP || i.op === CAPTURE) at = i.out
    else return i.op === EMPTY_WIDTH && (i.arg & BEGIN_TEXT) !== 0
  }
}
