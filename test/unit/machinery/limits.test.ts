import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { JsonDepthScanner, jsonTooDeepAt, MAX_NESTING_DEPTH, nestsDeeperThan } from '../../../core/machinery/limits.js'
import { decodeMessageOf } from '../../../core/encoding/protobuf.js'
import { Writer } from '../../../core/encoding/protobuf/wire.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { yamlNestsDeeperThan } from '../../../core/http/yaml-body.js'
import { typeTable } from '../../../core/resources/schema/index.js'

describe('nesting limits', () => {
  it('counts JSON brackets outside strings only', () => {
    assert.equal(jsonTooDeepAt('[[["[[[[[["]]]', 3), undefined)
    assert.equal(jsonTooDeepAt('{"a\\"[[[[":[[[1]]]}', 4), undefined)
    assert.equal(jsonTooDeepAt('{"a":[[[1]]]}', 3), '[')
    assert.equal(jsonTooDeepAt('[{}]', 1), '{')
  })

  it('measures decoded values without recursion, a million levels included', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 1_000_000; i++) deep = [deep]
    assert.equal(nestsDeeperThan(deep, 500), true)
    assert.equal(nestsDeeperThan({ a: [{ b: [] }] }, 4), false)
    assert.equal(nestsDeeperThan({ a: [{ b: [] }] }, 3), true)
  })

  it('measures YAML on the parser tokens, flow and block styles, a million levels included', async () => {
    assert.equal(await yamlNestsDeeperThan('a:\n  b:\n    - [1, {c: d}]\n', 5), false)
    assert.equal(await yamlNestsDeeperThan('a:\n  b:\n    - [1, {c: d}]\n', 4), true)
    assert.equal(await yamlNestsDeeperThan(`x: ${'['.repeat(1_000_000)}`, 500), true)
    assert.equal(await yamlNestsDeeperThan(`${'- '.repeat(600)}1\n`, 500), true)
    // Brackets inside scalars are text, not nesting.
    assert.equal(await yamlNestsDeeperThan(`a: "${'['.repeat(600)}"\nb: |\n  ${'{'.repeat(600)}\n`, 2), false)
  })

  it('refuses a protobuf message nested past the stack with 400, not a crash', () => {
    const schema = typeTable['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps']!
    const properties = schema.fields.find((f) => f.name === 'properties')!.proto!
    // JSONSchemaProps{properties: {"a": JSONSchemaProps{...}}} four thousand times.
    let inner: Uint8Array = new Uint8Array()
    for (let i = 0; i < 4_000; i++) {
      const entry = new Writer()
      entry.lenDelimited(1, new TextEncoder().encode('a'))
      entry.lenDelimited(2, inner)
      const message = new Writer()
      message.lenDelimited(properties, entry.finish())
      inner = message.finish()
    }
    assert.throws(
      () => decodeMessageOf(inner, schema),
      (err: unknown) => err instanceof StatusError && err.code === 400 && err.message === 'unable to decode protobuf body: exceeded max depth of 500',
    )
  })
})

describe('the depth of a JSON body counted over its bytes as they arrive', () => {
  const encoder = new TextEncoder()

  /** The scanner's answer for `text` cut into chunks at the given places. */
  function scanned(text: string, cuts: number[], limit: number): string | undefined {
    const bytes = encoder.encode(text)
    const scanner = new JsonDepthScanner(limit)
    const at = [0, ...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length]
    for (let k = 0; k + 1 < at.length; k++) {
      const found = scanner.feed(bytes.subarray(at[k], at[k + 1]))
      if (found) return found
    }
    return undefined
  }

  it('finds what the check over the text finds, however the bytes are cut: strings, escapes and multi-byte characters included', () => {
    const text = fc.oneof(
      fc.json(),
      fc.array(fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\\\', '\\"', 'é', '😀', 'x', ','), { maxLength: 60 }).map((parts) => parts.join('')),
    )
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 6 }), fc.integer({ min: 0, max: 4 }), (t, cuts, limit) => {
        assert.equal(scanned(t, cuts, limit), jsonTooDeepAt(t, limit), JSON.stringify(t))
      }),
      { numRuns: 3000, seed: 14 },
    )
  })

  it('refuses a body nested past the limit from its first kilobytes', () => {
    const scanner = new JsonDepthScanner()
    const head = encoder.encode(`{"data":${'['.repeat(MAX_NESTING_DEPTH + 1)}`)
    assert.equal(scanner.feed(head), '[')
  })
})

describe('strings skipped with the native search', () => {
  /** The check a character at a time, as it was written first: the reference. */
  function referenceTooDeep(text: string, limit: number): string | undefined {
    let depth = 0
    for (let i = 0; i < text.length; i++) {
      const c = text[i]
      if (c === '"') {
        for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++
      } else if (c === '{' || c === '[') {
        if (++depth > limit) return c
      } else if (c === '}' || c === ']') depth--
    }
    return undefined
  }

  it('ends strings where a character-by-character reading does, escapes at every place near a step boundary included', () => {
    const tail = fc.array(fc.constantFrom('\\', '\\\\', '\\"', '"', '[', 'x', 'é'), { maxLength: 8 }).map((parts) => parts.join(''))
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 65536 - 8, max: 65536 + 8 }), tail, tail, (head, length, before, after) => {
        const text = `${'['.repeat(head % 3)}"${'a'.repeat(length)}${before}"${after}[[[`
        assert.equal(jsonTooDeepAt(text, 3), referenceTooDeep(text, 3))
      }),
      { numRuns: 400, seed: 14 },
    )
  })
})
