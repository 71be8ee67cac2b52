import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiServerId } from '../../../core/controllers/apiserver-identity.js'

describe('apiServerId', () => {
  it('is stable for one host, address and port', async () => {
    assert.equal(await apiServerId('node-a', '10.0.0.1', 6443), await apiServerId('node-a', '10.0.0.1', 6443))
    assert.match(await apiServerId('node-a', '10.0.0.1', 6443), /^apiserver-[a-z2-7]{26}$/)
  })

  it('tells apart servers on one host by address or port', async () => {
    const ids = new Set([await apiServerId('node-a', '10.0.0.1', 6443), await apiServerId('node-a', '10.0.0.2', 6443), await apiServerId('node-a', '10.0.0.1', 6444)])
    assert.equal(ids.size, 3)
  })

  it('tells apart the worker processes of one daemon by their instance, each stable across restarts', async () => {
    const first = await apiServerId('node-a', '10.0.0.1', 6443, 'worker-1')
    const second = await apiServerId('node-a', '10.0.0.1', 6443, 'worker-2')
    assert.notEqual(first, second)
    assert.notEqual(first, await apiServerId('node-a', '10.0.0.1', 6443))
    assert.equal(first, await apiServerId('node-a', '10.0.0.1', 6443, 'worker-1'))
  })
})
