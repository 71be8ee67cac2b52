import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FieldSet, FieldsV1ParseError, formatPath, type Path } from '../../../core/apply/index.js'
import { runCounting } from '../../fixtures/checkpoints.js'

const f = (name: string) => ({ field: name })
const k = (...pairs: [string, string | number][]) => ({ key: pairs })

describe('FieldSet', () => {
  it('writes FieldsV1 with `.` first for a member that also has children, in upstream key order', () => {
    const set = FieldSet.of(
      [f('spec'), f('replicas')],
      [f('metadata'), f('labels')],
      [f('metadata'), f('labels'), f('app')],
      [f('metadata'), f('finalizers'), { value: 'b' }],
      [f('metadata'), f('finalizers'), { value: 'a' }],
      [f('spec'), f('containers'), k(['name', 'web'])],
      [f('spec'), f('containers'), k(['name', 'web']), f('image')],
    )
    assert.equal(
      JSON.stringify(set.toFieldsV1()),
      JSON.stringify({
        'f:metadata': { 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} }, 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {} } }, 'f:replicas': {} },
      }),
    )
  })

  it('builds the same set from paths in any order, duplicates once, as inserting them one by one', () => {
    const paths: Path[] = [
      [f('data'), f('b')],
      [f('data')],
      [f('data'), f('a')],
      [f('data'), f('b')],
      [f('spec'), f('containers'), k(['name', 'web']), f('image')],
      [f('spec'), f('containers'), k(['name', 'web'])],
      [f('spec'), f('containers'), k(['name', 'api']), f('image')],
    ]
    const oneByOne = paths.reduce((set, p) => set.insert(p), FieldSet.empty())
    for (const order of [paths, [...paths].reverse()]) assert.deepEqual(FieldSet.fromPaths(order).toFieldsV1(), oneByOne.toFieldsV1())
    assert.deepEqual(FieldSet.fromFieldsV1(oneByOne.toFieldsV1()).toFieldsV1(), oneByOne.toFieldsV1())
  })

  it('reads and builds a level of 100,000 keys in one pass (a large ConfigMap)', () => {
    const paths: Path[] = Array.from({ length: 100_000 }, (_, i) => [f('data'), f(`k${i}`)])
    const set = FieldSet.fromPaths(paths)
    const fields = set.toFieldsV1() as { 'f:data': Record<string, unknown> }
    assert.equal(Object.keys(fields['f:data']).length, 100_000)
    assert.equal(Object.keys((FieldSet.fromFieldsV1(fields).toFieldsV1() as typeof fields)['f:data']).length, 100_000)
  })

  it('writes FieldsV1 in steps as it writes it at once: the same text, with checkpoints in a level of many keys', () => {
    const wide: Path[] = Array.from({ length: 20_000 }, (_, i) => [f('data'), f(`k${i}`)])
    const nested: Path[] = Array.from({ length: 3_000 }, (_, i) => [f('spec'), f('containers'), k(['name', `c${i % 3}`]), f('env'), k(['name', `E${i}`]), f('value')])
    for (const [what, paths, least] of [['a level of 20,000 keys', wide, 9], ['three levels of lists', nested, 1], ['a few fields', [[f('a')], [f('b'), f('c')]], 0]] as const) {
      const set = FieldSet.fromPaths(paths as Path[])
      const { value: fieldsV1, checkpoints } = runCounting(set.toFieldsV1InSteps())
      assert.equal(JSON.stringify(fieldsV1), JSON.stringify(set.toFieldsV1()), what)
      assert.ok(checkpoints >= least, `${what}: ${checkpoints} checkpoints`)
      // The count of work is shared by every walk: a small one may meet the step its predecessors filled.
      if (least === 0) assert.ok(checkpoints <= 1, `${what}: written at once`)
    }
  })

  it('round-trips FieldsV1, keys sorted inside k: elements', () => {
    const raw = {
      'f:spec': {
        'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {}, 'f:protocol': {} } },
        'f:items': { 'i:0': {}, 'i:1': { 'f:x': {} } },
      },
    }
    const set = FieldSet.fromFieldsV1(raw)
    assert.equal(set.has([f('spec'), f('ports'), k(['port', 80], ['protocol', 'TCP'])]), true)
    assert.equal(set.has([f('spec'), f('items'), { index: 1 }, f('x')]), true)
    assert.equal(set.has([f('spec'), f('items'), { index: 1 }]), false)
    assert.deepEqual(FieldSet.fromFieldsV1(set.toFieldsV1()).paths(), set.paths())
    const reordered = FieldSet.fromFieldsV1({ 'f:a': { 'k:{"b":1,"a":2}': {} } })
    assert.equal(Object.keys((reordered.toFieldsV1()['f:a'] as object))[0], 'k:{"a":2,"b":1}')
  })

  it('drops keys of unknown element types and refuses malformed ones as upstream words it', () => {
    assert.deepEqual(FieldSet.fromFieldsV1({ 'z:future': {}, 'f:a': {} }).paths(), [[f('a')]])
    const bad: [unknown, RegExp][] = [
      [{ 'fx': {} }, /missing colon: fx/],
      [{ x: {} }, /key must be 2 characters long/],
      [{ 'i:one': {} }, /strconv.Atoi: parsing "one": invalid syntax/],
      [{ 'k:[1]': {} }, /parsing key as path element/],
      [{ 'f:a': 3 }, /ReadMapCB/],
      ['text', /ReadMapCB/],
    ]
    for (const [raw, message] of bad) assert.throws(() => FieldSet.fromFieldsV1(raw), (e: unknown) => e instanceof FieldsV1ParseError && message.test(e.message))
  })

  it('union, intersection and difference work per exact path; recursiveDifference removes subtrees', () => {
    const a = FieldSet.of([f('a')], [f('a'), f('b')], [f('c')])
    const b = FieldSet.of([f('a')], [f('d')])
    assert.deepEqual(a.union(b).paths(), [[f('a')], [f('c')], [f('d')], [f('a'), f('b')]])
    assert.deepEqual(a.intersection(b).paths(), [[f('a')]])
    assert.deepEqual(a.difference(b).paths(), [[f('c')], [f('a'), f('b')]])
    assert.deepEqual(a.recursiveDifference(b).paths(), [[f('c')]])
    assert.equal(a.difference(a).isEmpty(), true)
    assert.equal(FieldSet.empty().isEmpty(), true)
    assert.deepEqual(a.leaves().paths(), [[f('c')], [f('a'), f('b')]])
  })

  it('keeps only the paths under given prefixes, a star matching any list item', () => {
    const set = FieldSet.of(
      [f('spec'), f('containers'), k(['name', 'web'])],
      [f('spec'), f('containers'), k(['name', 'web']), f('image')],
      [f('spec'), f('containers'), k(['name', 'web']), f('resources'), f('limits'), f('cpu')],
      [f('spec'), f('containers'), k(['name', 'db']), f('resizePolicy')],
      [f('spec'), f('nodeName')],
    )
    const kept = set.onlyUnder([
      ['spec', 'containers', '*', 'resources'],
      ['spec', 'containers', '*', 'resizePolicy'],
    ])
    assert.equal(kept.toString(), ['.spec.containers[name="db"].resizePolicy', '.spec.containers[name="web"].resources.limits.cpu'].join('\n'))
    assert.ok(set.onlyUnder([]).isEmpty())
  })

  it('prints paths as upstream does in conflict messages', () => {
    const cases: [Path, string][] = [
      [[f('spec'), f('replicas')], '.spec.replicas'],
      [[f('spec'), f('containers'), k(['name', 'nginx']), f('image')], '.spec.containers[name="nginx"].image'],
      [[f('spec'), f('ports'), k(['containerPort', 80], ['protocol', 'TCP'])], '.spec.ports[containerPort=80,protocol="TCP"]'],
      [[f('metadata'), f('finalizers'), { value: 'x' }], '.metadata.finalizers[="x"]'],
      [[f('args'), { index: 2 }], '.args[2]'],
    ]
    for (const [path, text] of cases) assert.equal(formatPath(path), text)
  })
})
