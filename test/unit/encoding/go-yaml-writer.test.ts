import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isScalar, type Pair, parse, stringify } from 'yaml'
import { GoYamlWriter } from '../../../core/encoding/go-yaml-writer.js'
import { compareYamlKeys, GO_YAML_OPTIONS } from '../../../core/encoding/go-yaml.js'
import { runAtOnce, runInSlices } from '../../../core/machinery/time-slice.js'
import { runCounting } from '../../fixtures/checkpoints.js'
import { GO_YAML_ANNOTATIONS_TEXT, GO_YAML_CONTAINERS_TEXT, GO_YAML_DATA, GO_YAML_DATA_TEXT, GO_YAML_POD } from '../../fixtures/go-yaml-upstream.js'

const writer = new GoYamlWriter(GO_YAML_OPTIONS, compareYamlKeys)

/**
 * What the yaml package writes for the data, keys in go-yaml's order (the
 * package sorting its own entries: an object lists keys that are array
 * indexes, "1", before the others whatever order they were set in): the
 * writer's reference.
 */
function packageText(value: unknown): string {
  const keyOf = (pair: Pair): string => String(isScalar(pair.key) ? pair.key.value : pair.key)
  return stringify(value, { ...GO_YAML_OPTIONS, sortMapEntries: (a, b) => compareYamlKeys(keyOf(a), keyOf(b)) })
}

/** A small deterministic generator (a linear congruential one), so a failure names its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

// Pieces of strings that each change how YAML writes one: types YAML 1.1 reads, indicators, spaces, breaks, control characters.
const PIECES = [
  'a', 'Z', 'name', 'x-y', 'a_b', 'a/b', 'a.b', '9', '0', '012', '0x1F', '0b101', '1_000', '1:20', '1.5', '.5', '1.', '-.', '.inf', '-.Inf', '.NaN',
  '1e3', '2024-01-01', '2024-01-01T00:00:00Z', 'yes', 'No', 'ON', 'off', 'y', 'n', 'true', 'False', 'null', '~', '=',
  ' ', '  ', '\t', '\n', '\n\n', '\r', ':', ': ', ' #', '#', '-', '- ', '--- ', '---', '...', '?', '? ', '%', '@', '`', '"', "'", '\\',
  '|', '>', '*', '&', '!', '[', ']', '{', '}', ',', 'é', 'ß', '日本', '💥', '\u0001', '\u007f', '\u0085', '\u00a0', '\u2028', '\ud800',
  'word ', 'lorem ipsum dolor sit amet ', 'x'.repeat(90), 'y '.repeat(60),
]

function randomString(next: () => number, longKeys: boolean): string {
  if (longKeys && next() < 0.02) return 'k'.repeat(1030 + Math.floor(next() * 10))
  const parts = Math.floor(next() * 4)
  let text = ''
  for (let i = 0; i < parts; i++) text += PIECES[Math.floor(next() * PIECES.length)]
  return text
}

function randomValue(next: () => number, depth: number): unknown {
  const r = next()
  if (depth > 0 && r < 0.2) {
    const n = Math.floor(next() * 5)
    const out: Record<string, unknown> = {}
    for (let i = 0; i < n; i++) out[randomString(next, true)] = randomValue(next, depth - 1)
    return out
  }
  if (depth > 0 && r < 0.35) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth - 1))
  if (r < 0.45) return [null, true, false][Math.floor(next() * 3)]
  if (r < 0.6) return [0, -0, 1, -7, 42, 1.5, -0.25, 1e21, 1e-7, 123456789012, 0.1 + 0.2][Math.floor(next() * 11)]
  return randomString(next, false)
}

describe('the YAML writer of API objects', () => {
  it('writes strings as upstream does: quoted and folded as go-yaml writes them, recorded from upstream\'s answers', () => {
    assert.equal(runAtOnce(writer.document({ data: GO_YAML_DATA })).trimEnd(), GO_YAML_DATA_TEXT)
    const pod = runAtOnce(writer.document({ metadata: { annotations: GO_YAML_POD.annotations }, spec: { containers: [GO_YAML_POD.container] } }))
    const section = (start: string, end: string) => pod.slice(pod.indexOf(start), end ? pod.indexOf(end, pod.indexOf(start)) : undefined).trimEnd()
    assert.equal(section('  annotations:', 'spec:'), GO_YAML_ANNOTATIONS_TEXT)
    assert.equal(section('  containers:', '    image:'), GO_YAML_CONTAINERS_TEXT)
  })

  it('writes thousands of documents of every kind of scalar and nesting that read back as the data', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = random(seed)
      const value: Record<string, unknown> = {}
      const fields = 1 + Math.floor(next() * 6)
      for (let i = 0; i < fields; i++) value[randomString(next, true)] = randomValue(next, 4)
      const text = runAtOnce(writer.document(value))
      // Through JSON both: -0 reads back as -0, which JSON writes as 0.
      const read: unknown = JSON.parse(JSON.stringify(parse(text, { ...GO_YAML_OPTIONS, merge: false, uniqueKeys: false })))
      assert.deepEqual(read, JSON.parse(JSON.stringify(value)), `seed ${seed}: ${JSON.stringify(value)}\n${text}`)
    }
  })

  it('lays out keys, lists and maps as the yaml package does, where go-yaml and the package write each string alike', () => {
    // Values of names, numbers and the types YAML 1.1 reads: written plain or double-quoted by both.
    const names = PIECES.filter((piece) => /^[A-Za-z0-9]{1,20}$/.test(piece))
    for (let seed = 1; seed <= 500; seed++) {
      const next = random(seed)
      const pick = () => names[Math.floor(next() * names.length)]!
      const valueOf = (depth: number): unknown => {
        const r = next()
        if (depth > 0 && r < 0.3) return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [randomString(next, true), valueOf(depth - 1)]))
        if (depth > 0 && r < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => valueOf(depth - 1))
        if (r < 0.6) return [null, true, false, 0, -0, 1.5, 1e21][Math.floor(next() * 7)]
        return pick() + (next() < 0.5 ? '' : ` ${pick()}`)
      }
      const value = { [randomString(next, true)]: valueOf(4), [randomString(next, true)]: valueOf(4) }
      assert.equal(runAtOnce(writer.document(value)), packageText(value), `seed ${seed}: ${JSON.stringify(value)}`)
    }
  })

  it('writes one long value in steps, a chunk between checkpoints, that reads back as the data', () => {
    const value = { data: { quoted: "it's: ".repeat(40_000), escaped: 'tab\there '.repeat(30_000) } }
    const { value: text, checkpoints } = runCounting(writer.document(value))
    assert.ok(checkpoints >= 20, `${checkpoints} checkpoints`)
    const read: unknown = parse(text, { ...GO_YAML_OPTIONS })
    assert.deepEqual(read, value)
  })

  it('writes `<<` plain as a value, as go-yaml does (its encoder finds no type for it), and quotes it as a key as the package does', () => {
    assert.equal(runAtOnce(writer.document({ '<<': '<<', a: ['<<'] })), '"<<": <<\na:\n- <<\n')
  })

  it('writes a key of over 1,024 characters as the package does, an explicit `? key` entry, at any depth', () => {
    const long = 'k'.repeat(1100)
    const value = { a: { [long]: 'v', b: [{ [long]: { c: 1 } }] }, [long]: [1, 2] }
    assert.equal(runAtOnce(writer.document(value)), packageText(value))
    assert.match(runAtOnce(writer.document(value)), /^ {2}\? k{1100}\n {2}: v$/m)
  })

  it('folds long strings at the first space past column 80, at every depth, and they read back whole', () => {
    const words = 'lorem ipsum dolor sit amet consectetur '.repeat(6)
    let value: unknown = { text: words, list: [words, { text: words }] }
    for (let depth = 0; depth < 30; depth++) value = { [`level${depth}`]: value, [`k${depth}`]: words }
    const text = runAtOnce(writer.document(value))
    assert.deepEqual(parse(text), value)
    // Single-quoted for its trailing space; past column 80 at "consectetur", folded at the space after it.
    assert.match(text, /^k29: 'lorem ipsum dolor sit amet consectetur lorem ipsum dolor sit amet consectetur\n {2}lorem /m)
  })

  it('writes a map of 40,000 keys in steps: checkpoints all along, the same text as at once', async () => {
    const data: Record<string, string> = {}
    // Keys go-yaml's order sorts consistently: it is no total order where digit runs meet letters
    // (key-1a0 < key-2 < key-10 < key-1a0), and there the order depends on the sort's algorithm.
    for (let i = 0; i < 40000; i++) data[`key-${i}`] = i % 3 === 0 ? `value ${i}` : i % 3 === 1 ? 'yes' : String(i)
    const value = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data }
    const { value: text, checkpoints } = runCounting(writer.document(value))
    // Sorting 40,000 keys in runs and writing 80,000 scalars: at least one checkpoint per few thousand.
    assert.ok(checkpoints >= 20, `${checkpoints} checkpoints`)
    assert.equal(text, packageText(value))
    assert.equal(await runInSlices(writer.document(value)), text)
  })
})
