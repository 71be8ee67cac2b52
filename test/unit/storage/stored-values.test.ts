/**
 * A large write's object, marked by the registry, is encoded by its store in
 * steps (the protobuf codec's encodeInSteps) with the event loop let run
 * between them: the same bytes as at once.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { codecFor } from '../../../core/storage/codec.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { StoredValues } from '../../../core/storage/value/stored-values.js'
import { identityTransformer } from '../../../core/storage/value/transformer.js'
import { markedLarge } from '../../../core/machinery/large-objects.js'
import { countTurns } from '../../helpers/event-loop-turns.js'

/** What `work` gives, and how many turns the event loop took while it ran. */
async function counted<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  const counter = countTurns()
  try {
    return { value: await work(), turns: counter.turns }
  } finally {
    counter.stop()
  }
}

const configMap = (name: string, keys: number): KubeObject =>
  ({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'default' }, data: Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, 'v'])) }) as KubeObject

describe('stored values of a large write', () => {
  it('are encoded in steps when the write marked its object large, to the same bytes; at once otherwise', async () => {
    const values = new StoredValues(codecFor('application/vnd.kubernetes.protobuf'), () => identityTransformer)
    const large = configMap('large', 100_000)
    const atOnce = await counted(() => values.encode('/registry/configmaps/default/large', large))
    const inSteps = await counted(() => values.encode('/registry/configmaps/default/large', markedLarge(configMap('large', 100_000))))
    assert.deepEqual(inSteps.value.plain, atOnce.value.plain)
    assert.deepEqual(inSteps.value.stored, atOnce.value.stored)
    assert.equal(atOnce.turns, 0, 'unmarked, the object is encoded at once')
    assert.ok(inSteps.turns > 0, 'marked, the event loop ran while it was encoded')
  })
})
