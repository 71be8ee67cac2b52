/**
 * Discovery documents are made once per state of the catalogue: each read
 * after a custom resource comes or goes sees it, in the plain and the
 * aggregated documents alike, and the answers read before stay as they were.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, startServer, type TestClient } from './harness.js'
import { CRDS, cronTabDefinition, installDefinition } from './crd-fixtures.js'

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
const GROUP = 'stable.example.com'

describe('discovery documents', () => {
  let api: TestClient
  const served = async () => {
    const plain = (await api.get('/apis')).body as { groups: { name: string }[] }
    const aggregated = (await api.get('/apis', { headers: { accept: AGGREGATED } })).body as { items: { metadata: { name: string } }[] }
    return {
      plain: plain.groups.some((g) => g.name === GROUP),
      aggregated: aggregated.items.some((g) => g.metadata.name === GROUP),
      group: (await api.get(`/apis/${GROUP}`)).status,
      version: (await api.get(`/apis/${GROUP}/v1`)).status,
    }
  }
  before(async () => {
    api = await startServer()
  })

  it('follow a custom resource definition as it comes and goes', async () => {
    assert.deepEqual(await served(), { plain: false, aggregated: false, group: 404, version: 404 })
    // Asked twice: a document kept from the first read is the same document.
    assert.deepEqual((await api.get('/apis/apps/v1')).body, (await api.get('/apis/apps/v1')).body)
    await installDefinition(api, cronTabDefinition())
    assert.deepEqual(await served(), { plain: true, aggregated: true, group: 200, version: 200 })
    const resources = (await api.get(`/apis/${GROUP}/v1`)).body.resources.map((r: { name: string }) => r.name)
    assert.deepEqual(resources, ['crontabs', 'crontabs/scale', 'crontabs/status'])
    assert.equal((await api.delete(`${CRDS}/crontabs.${GROUP}`)).status, 200)
    const gone = { plain: false, aggregated: false, group: 404, version: 404 }
    await eventually('discovery no longer lists the group', async () => JSON.stringify(await served()) === JSON.stringify(gone))
  })
})
