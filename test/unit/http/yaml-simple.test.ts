import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { Composer, Parser } from 'yaml'
import { runAtOnce } from '../../../core/machinery/time-slice.js'
import { simpleYamlWalk } from '../../../core/http/yaml-simple.js'

/** What the yaml package reads, in one piece, as the full decoder's reference. */
function yamlPackage(text: string): unknown {
  const docs = [...new Composer({ uniqueKeys: false, merge: false }).compose(new Parser().parse(text), true, text.length)]
  return docs[0]?.toJS({ maxAliasCount: 100 })
}

const keys = ['a', 'b', 'key', 'name', 'value', 'x_y', 'app.kubernetes.io/name', 'data', 'metadata']
const words = ['a', 'v1', 'ConfigMap', 'x_y', 'with space', 'two  spaces', 'yes please', 'yes', 'No', 'ON', 'true', 'False', 'null', 'Null', 'y', 'n', '~', '0', '7', '42', '123456789012345', '1234567890123456']
const tricky = ['007', '0x1F', '0o17', '1e3', '1.5', '.inf', '-1', '1_000', '1:20', '2001-12-14', "'q'", '"q"', '&a x', '*a', '!!str x', '[a]', '{a: b}', '|', '>', 'a #c', 'a: b', '-', '<<', '', '@x', '%x', '`x`', 'a:b', 'x#y']

/** A document of nested maps built from the pools above, with blank lines, comments and odd indents now and then. */
const documents = fc.letrec((tie) => ({
  map: fc.uniqueArray(
    fc.tuple(
      fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.constantFrom(...words, ...tricky) }),
      fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...words) }, { weight: 1, arbitrary: fc.constantFrom(...tricky) }, { weight: 2, arbitrary: tie('map') }),
    ),
    { minLength: 1, maxLength: 5, selector: ([k]) => k },
  ),
})).map
function render(entries: unknown, indent: number, step: number, noise: number[]): string {
  let out = ''
  for (const [k, v] of entries as Array<[string, unknown]>) {
    const n = noise.shift() ?? 0
    if (n === 1) out += '\n'
    if (n === 2) out += `${' '.repeat(indent)}# a comment\n`
    const pad = ' '.repeat(indent + (n === 3 ? 1 : 0))
    if (Array.isArray(v)) out += `${pad}${k}:${n === 4 ? '  ' : ''}\n${render(v, indent + step, step, noise)}`
    else out += `${pad}${k}: ${v}${n === 5 ? '   ' : ''}\n`
  }
  return out
}

describe('simple YAML read line by line', () => {
  it('reads what the yaml package reads whenever it reads a text at all', () => {
    fc.assert(
      fc.property(documents, fc.constantFrom(1, 2, 4), fc.array(fc.nat(30), { maxLength: 40 }), (doc, step, noise) => {
        const text = render(doc, 0, step, noise)
        const simple = runAtOnce(simpleYamlWalk(text, 500))
        if (!simple) return
        assert.deepEqual(simple.value, yamlPackage(text), text)
      }),
      { numRuns: 5000, seed: 14 },
    )
  })

  it('reads the ConfigMaps the benchmarks send, and leaves a key twice, sequences and anchors to the full decoder', () => {
    const many = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many-keys\ndata:\n${Array.from({ length: 20000 }, (_, i) => `  k${i}: v\n`).join('')}`
    const read = runAtOnce(simpleYamlWalk(many, 500))
    assert.equal(Object.keys((read?.value['data'] ?? {}) as object).length, 20000)
    assert.deepEqual(read?.value['metadata'], { name: 'many-keys' })
    for (const text of ['a: 1\na: 2\n', 'a:\n- x\n', 'a: &x y\nb: *x\n', 'a: "q"\n', '--- \na: b\n', 'a: b\n  c: d\n', '  a: b\n', 'a: b\r\n', '\ta: b\n', '__proto__: x\n', '', '# only a comment\n'])
      assert.equal(runAtOnce(simpleYamlWalk(text, 500)), undefined, JSON.stringify(text))
  })

  it('leaves a map nested past the limit to the full decoder, which names the limit', () => {
    const deep = Array.from({ length: 6 }, (_, i) => `${' '.repeat(i)}k:\n`).join('') + `${' '.repeat(6)}k: v\n`
    assert.notEqual(runAtOnce(simpleYamlWalk(deep, 7)), undefined)
    assert.equal(runAtOnce(simpleYamlWalk(deep, 6)), undefined)
  })
})
