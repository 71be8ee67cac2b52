import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { groupsOfDistinctKinds } from '../../../core/storage/create-many.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const of = (kind: string | undefined, name: string, apiVersion = 'v1'): readonly [string, KubeObject] => [`/registry/${kind ?? 'none'}/${name}`, { apiVersion, ...(kind ? { kind } : {}), metadata: { name } } as KubeObject]

/** The kinds in each group, by name. */
const named = (objects: readonly (readonly [string, KubeObject])[], groups: number[][]) => groups.map((g) => g.map((i) => objects[i]![1].metadata.name))

describe('groupsOfDistinctKinds', () => {
  it('puts at most one object of a kind in a group, each kind in its order', () => {
    const objects = [of('ClusterRole', 'r1'), of('ClusterRole', 'r2'), of('Namespace', 'n1'), of('ClusterRole', 'r3'), of('Namespace', 'n2'), of('PriorityClass', 'p1')]
    assert.deepEqual(named(objects, groupsOfDistinctKinds(objects, 32)), [['r1', 'n1', 'p1'], ['r2', 'n2'], ['r3']])
  })

  it('takes a kind by its name whatever its version (one resource, one store)', () => {
    const objects = [of('Event', 'e1', 'v1'), of('Event', 'e2', 'events.k8s.io/v1')]
    assert.deepEqual(named(objects, groupsOfDistinctKinds(objects, 32)), [['e1'], ['e2']])
  })

  it('gives an object without a kind a group of its own', () => {
    const objects = [of(undefined, 'x1'), of('Namespace', 'n1'), of(undefined, 'x2')]
    assert.deepEqual(named(objects, groupsOfDistinctKinds(objects, 32)), [['x1', 'n1'], ['x2']])
  })

  it('holds no group above the most given, and still no kind twice in one', () => {
    const objects = ['A', 'B', 'C', 'D', 'E'].flatMap((kind) => [of(kind, `${kind}1`), of(kind, `${kind}2`)])
    const groups = groupsOfDistinctKinds(objects, 2)
    assert.ok(groups.every((g) => g.length <= 2))
    for (const group of groups) assert.equal(new Set(group.map((i) => objects[i]![1].kind)).size, group.length)
    assert.deepEqual(groups.flat().sort((a, b) => a - b), objects.map((_, i) => i), 'every object in one group')
    // Each kind's second object is in a later group than its first.
    for (const kind of ['A', 'B', 'C', 'D', 'E']) {
      const at = (name: string) => groups.findIndex((g) => g.some((i) => objects[i]![1].metadata.name === name))
      assert.ok(at(`${kind}1`) < at(`${kind}2`), kind)
    }
  })
})
