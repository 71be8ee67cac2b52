/**
 * The controllers' and simulated nodes' event recorder: core/v1 Events as
 * upstream's recorder writes them, a repeat counted on the first event
 * rather than written again (upstream's event correlator).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ObjectClient } from '../../core/client/object-client.js'
import { clientEventRecorder } from '../../core/controllers/workloads/events.js'
import { silentLogger } from '../../core/logging/logger.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { configMaps } from '../../core/resources/core/configmaps.js'
import { events } from '../../core/resources/core/events.js'
import { createApiServer } from '../../core/server.js'
import { eventually } from './harness.js'

/** The default namespace's events once `holds` is true of them. */
async function eventsWhen(client: ObjectClient, what: string, holds: (items: KubeObject[]) => boolean): Promise<KubeObject[]> {
  let items: KubeObject[] = []
  await eventually(what, async () => holds((items = (await client.list(events, 'default')).items)))
  return items
}

describe('the event recorder', () => {
  it('counts a repeat on the event it repeats, with its last time, and writes a different one anew', async () => {
    const server = createApiServer()
    await server.ready
    const { client } = server
    const subject = await client.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'subject' } })
    let clock = Date.parse('2026-01-01T00:00:00Z')
    const recorder = clientEventRecorder(client, 'example-controller', () => new Date(clock), silentLogger, 'node-a')
    const about: KubeObject = { ...subject, apiVersion: 'v1', kind: 'ConfigMap' }
    recorder.record(about, 'Warning', 'BackOff', 'Back-off restarting', 'spec.containers{main}')
    const first = await eventsWhen(client, 'the first event', (items) => items.length === 1)
    clock += 30_000
    recorder.record(about, 'Warning', 'BackOff', 'Back-off restarting', 'spec.containers{main}')
    recorder.record(about, 'Normal', 'Started', 'Container started', 'spec.containers{main}')
    const listed = await eventsWhen(client, 'the count and the second event', (items) => items.length === 2 && items.some((e) => e['count'] === 2))
    const counted = listed.find((e) => e['reason'] === 'BackOff')!
    assert.equal(counted.metadata.name, first[0]!.metadata.name)
    assert.deepEqual([counted['firstTimestamp'], counted['lastTimestamp']], ['2026-01-01T00:00:00Z', '2026-01-01T00:00:30Z'])
    assert.deepEqual(counted['source'], { component: 'example-controller', host: 'node-a' })
    assert.equal(listed.find((e) => e['reason'] === 'Started')!['count'], 1)
    // Past the ten minutes, the same event is a new one.
    clock += 11 * 60_000
    recorder.record(about, 'Warning', 'BackOff', 'Back-off restarting', 'spec.containers{main}')
    await eventsWhen(client, 'a new event after the window', (items) => items.length === 3)
    await server.shutdown()
  })
})
