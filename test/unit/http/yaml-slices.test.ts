import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LineCounter, parseDocument } from 'yaml'
import { decodeYaml } from '../../../core/http/yaml-body.js'

/** What the yaml package makes of the whole text in one piece: the value, or the first error with its line. */
function inOnePiece(text: string): { value: unknown } | { error: string } {
  const lines = new LineCounter()
  const doc = parseDocument(text, { uniqueKeys: false, merge: false, lineCounter: lines })
  const problem = doc.errors[0]
  if (problem) return { error: `line ${lines.linePos(problem.pos[0]).line}: ${problem.message.split(' at line ')[0]}` }
  return { value: doc.toJS() }
}

async function decoded(text: string): Promise<{ value: unknown } | { error: string }> {
  try {
    return { value: (await decodeYaml(text, false)).value }
  } catch (err) {
    return { error: (err as Error).message }
  }
}

const keys = (count: number, indent: string, line: (i: number) => string) => Array.from({ length: count }, (_, i) => `${indent}${line(i)}`).join('\n')

describe('a large YAML body decoded in slices', () => {
  const documents: Record<string, string> = {
    'a map of 20000 keys under a key': `apiVersion: v1\nkind: ConfigMap\ndata:\n${keys(20000, '  ', (i) => `k${i}: v${i}`)}\n`,
    'a sequence of maps starting on the dash line, after --- and a comment': `---\n# items\n${keys(3000, '', (i) => `- name: n${i}\n  v: [${i}, "x"]\n  m:\n    a: 1`)}\n`,
    'quoted keys, block scalars, tags and comments': `items:\n${keys(2000, '  ', (i) => `- "k${i}": 'v'  # c\n    b: |\n      text ${i}\n    c: !!str 12`)}\n`,
    'maps nested two levels, each large': `a:\n${keys(300, '  ', (i) => `k${i}:\n${keys(40, '    ', (j) => `j${j}: ${j}`)}`)}\n`,
    'keys that are not plain names': `a:\n${keys(2000, '  ', (i) => `k${i}: v`)}\n  __proto__: {x: 1}\n  constructor: 1\n  "1": one\n`,
  }
  for (const [what, text] of Object.entries(documents)) {
    it(`reads ${what} as the whole document reads`, async () => {
      assert.deepEqual(await decoded(text), inOnePiece(text))
    })
  }

  const broken: Record<string, string> = {
    'a bad escape in the first batch': `a:\n${keys(3000, '  ', (i) => `k${i}: "bad \\q escape"`)}\n`,
    'a compact nested map at the end': `a:\n${keys(3000, '  ', (i) => `k${i}: v`)}\n   bad: indent\n`,
    'an unterminated flow sequence at the end': `a:\n${keys(3000, '  ', (i) => `k${i}: v`)}\n  b: [1, 2\n`,
  }
  for (const [what, text] of Object.entries(broken)) {
    it(`refuses ${what} with the line the whole document names`, async () => {
      const whole = inOnePiece(text)
      assert.ok('error' in whole)
      assert.deepEqual(await decoded(text), whole)
    })
  }

  it('reads megabytes of JSON text sent as YAML as JSON.parse does, and leaves JSON that is not plain to the YAML decoder', async () => {
    const data = Object.fromEntries(Array.from({ length: 30000 }, (_, i) => [`key-${i}`, { n: i, s: `v${i}`, l: [true, null, 1.5] }]))
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', data })
    assert.ok(text.length > 1024 * 1024)
    assert.deepEqual(await decodeYaml(text, true), { value: JSON.parse(text), duplicates: [] })
    // A key given twice: the YAML decoder names it, with its line.
    const twice = `${text.slice(0, -2)},"key-0":{"n":0}}}`
    assert.deepEqual((await decodeYaml(twice, true)).duplicates, ['yaml: unmarshal errors:\n  line 1: key "key-0" already set in map'])
  })

  it('finds a key given twice in batches far apart, outer maps first', async () => {
    const text = `data:\n${keys(5000, '  ', (i) => `k${i}: v`)}\n  k5: again\nnested:\n  m:\n    a: 1\n    a: 2\n`
    const { duplicates } = await decodeYaml(text, true)
    assert.deepEqual(duplicates, [`yaml: unmarshal errors:\n  line 5002: key "k5" already set in map\n  line 5006: key "a" already set in map`])
    // An anchor makes the decoder compose the document in one piece: the same answer.
    assert.deepEqual((await decodeYaml(`${text}z: &x 1\n`, true)).duplicates, duplicates)
  })
})

describe('a YAML body with a collection as a key', () => {
  it('is decoded without a warning on the process, however often a client sends it', async () => {
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.message)
    process.on('warning', onWarning)
    try {
      for (const large of [false, true]) {
        // Past 64 KiB the body is composed in slices: both ways are covered.
        const text = `data:\n  ? [a, b]\n  : x\n${large ? keys(5000, '  ', (i) => `key${i}: value${i}`) : ''}\n`
        const { value } = await decodeYaml(text, false)
        assert.equal((value as { data: Record<string, unknown> }).data['[ a, b ]'], 'x')
      }
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual(warnings, [])
    } finally {
      process.off('warning', onWarning)
    }
  })
})
