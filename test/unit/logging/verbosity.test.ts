/** klog's -v and --vmodule over the project's module names (core/logging/verbosity.ts). */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { globMatch, verbose, verbosityEnabled } from '../../../core/logging/verbosity.js'
import type { Logger } from '../../../core/logging/logger.js'

describe('verbosity', () => {
  it('shows V(n) when n is at most -v', () => {
    const at2 = { v: 2, vmodule: [] }
    assert.equal(verbosityEnabled(at2, 0, 'httplog'), true)
    assert.equal(verbosityEnabled(at2, 2, 'httplog'), true)
    assert.equal(verbosityEnabled(at2, 3, 'httplog'), false)
  })

  it('raises the verbosity of the modules the first matching --vmodule pattern names', () => {
    const settings = { v: 0, vmodule: [{ pattern: 'http*', verbosity: 3 }, { pattern: 'httplog', verbosity: 1 }, { pattern: 'auth?ntication', verbosity: 5 }] }
    assert.equal(verbosityEnabled(settings, 3, 'httplog'), true, 'the first match wins')
    assert.equal(verbosityEnabled(settings, 4, 'httplog'), false)
    assert.equal(verbosityEnabled(settings, 5, 'authentication'), true)
    assert.equal(verbosityEnabled(settings, 1, 'authorization'), false, 'no pattern: -v')
  })

  it('never lowers -v for a module, as klog', () => {
    assert.equal(verbosityEnabled({ v: 4, vmodule: [{ pattern: 'httplog', verbosity: 0 }] }, 3, 'httplog'), true)
  })

  it('matches globs with * and ? only, the rest literally', () => {
    assert.equal(globMatch('*', ''), true)
    assert.equal(globMatch('a*b*c', 'axxbyyc'), true)
    assert.equal(globMatch('a*b*c', 'axxbyy'), false)
    assert.equal(globMatch('a?c', 'abc'), true)
    assert.equal(globMatch('a.c', 'abc'), false, 'a dot is not a regular expression')
    assert.equal(globMatch('[ab]', 'a'), false, 'brackets are literal')
    // Linear: a pathological pattern over a long name answers at once.
    assert.equal(globMatch(`${'*a'.repeat(30)}b`, 'a'.repeat(5000)), false)
  })

  it('logs a verbose message as info with its level and module, and builds nothing when it is off', () => {
    const lines: Record<string, unknown>[] = []
    const logger: Logger = {
      debug() {},
      info: (fields) => void lines.push(fields),
      warn() {},
      error() {},
      enabled: (level, module) => verbosityEnabled({ v: 1, vmodule: [{ pattern: 'httplog', verbosity: 3 }] }, level, module),
    }
    verbose(logger, 3, 'httplog')?.({ a: 1 }, 'shown')
    assert.equal(verbose(logger, 3, 'authentication'), undefined)
    assert.deepEqual(lines, [{ a: 1, v: 3, module: 'httplog' }])
  })

  it('shows only V(0) through a logger that knows no verbosity', () => {
    const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
    assert.ok(verbose(logger, 0, 'x'))
    assert.equal(verbose(logger, 1, 'x'), undefined)
  })
})
