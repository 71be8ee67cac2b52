import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventRateLimit } from '../../../core/admission/builtin/event-rate-limit.js'
import { events } from '../../../core/resources/core/events.js'
import { attrs, refusal } from './attributes.js'

const event = (namespace: string, involved = 'pod-a') => ({
  metadata: { name: `e-${Math.random()}`, namespace },
  involvedObject: { kind: 'Pod', namespace, name: involved },
  source: { component: 'kubelet' },
})

describe('EventRateLimit admission', () => {
  it('takes one token per event from each bucket; a bucket refills at qps; 429 names the type and key', async () => {
    let ms = 0
    const plugin = eventRateLimit({ limits: [{ type: 'Namespace', qps: 1, burst: 2, cacheSize: 0 }] }, () => new Date(ms))
    const create = (ns: string) => refusal(() => plugin.validate(attrs(events, 'CREATE', event(ns), { namespace: ns })))
    assert.equal(await create('a'), undefined)
    assert.equal(await create('a'), undefined)
    assert.deepEqual(await create('a'), { code: 429, message: 'Too many requests: limit reached on type Namespace for key a' })
    assert.equal(await create('b'), undefined, 'another namespace has its own bucket')
    ms += 1000
    assert.equal(await create('a'), undefined, 'a second later one token is back')
    assert.equal((await create('a'))?.code, 429)
  })

  it('keys by server, user and source with object; dry-run takes no token', async () => {
    const limits = [
      { type: 'Server', qps: 0, burst: 3, cacheSize: 0 },
      { type: 'User', qps: 0, burst: 2, cacheSize: 10 },
      { type: 'SourceAndObject', qps: 0, burst: 1, cacheSize: 10 },
    ]
    const plugin = eventRateLimit({ limits }, () => new Date(0))
    const create = (involved: string, more = {}) => refusal(() => plugin.validate(attrs(events, 'CREATE', event('a', involved), more)))
    assert.equal(await create('x', { dryRun: true }), undefined)
    assert.equal(await create('x'), undefined)
    // Refused by the last bucket, after the earlier ones gave their token, as upstream's enforcers do.
    assert.deepEqual(await create('x'), { code: 429, message: 'Too many requests: limit reached on type SourceAndObject for key kubeletPodax' })
    assert.deepEqual(await create('y'), { code: 429, message: 'Too many requests: limit reached on type User for key alice' })
    assert.deepEqual(await create('w', { user: { username: 'bob', groups: [] } }), { code: 429, message: 'Too many requests: limit reached on type Server for key ' })
  })
})
