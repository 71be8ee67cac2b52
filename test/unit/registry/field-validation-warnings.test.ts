/**
 * fieldValidation=Warn turns each problem of a body into a warning, once.
 * Checking each new text against every warning before it made a body of
 * 30,000 duplicate fields cost 9 s of the serving thread; the proof here
 * counts the warnings read, through a list that counts its reads, instead
 * of timing them.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { enforceFieldValidation } from '../../../core/registry/field-validation.js'
import type { RequestContext } from '../../../core/registry/request-context.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'

/** The warnings enforceFieldValidation leaves for `problems`, and how many times it read a warning already listed. */
function warn(problems: string[]): { warnings: string[]; reads: number } {
  const warnings: string[] = ['duplicate field "data.k0"']
  let reads = 0
  const counted = new Proxy(warnings, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++
      return Reflect.get(target, key, receiver) as unknown
    },
  })
  const ctx = { fieldValidation: 'Warn', bodyProblems: problems, warnings: counted } as unknown as RequestContext
  enforceFieldValidation(ctx, { kind: 'ConfigMap', version: 'v1' } as unknown as ResourceEntry, [])
  return { warnings, reads }
}

describe('field validation warnings', () => {
  it('warns of each of 20000 duplicate fields once, reading the warnings already listed a number of times linear in their count', () => {
    const problems = Array.from({ length: 40_000 }, (_, i) => `duplicate field "data.k${i % 20_000}"`)
    const { warnings, reads } = warn(problems)
    assert.equal(warnings.length, 20_000)
    assert.equal(warnings[1], 'duplicate field "data.k1"')
    assert.equal(new Set(warnings).size, 20_000)
    // Compared with all before it, each text read up to 20000 warnings: some 600 million reads.
    assert.ok(reads <= 2 * 20_000, `${reads} reads of the warnings`)
  })
})
