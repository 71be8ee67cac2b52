import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { JsonObject } from '../../../core/api/openapi.js'
import { mergeAggregatedV2 } from '../../../core/api/openapi-v2-merge.js'

const ref = (name: string) => ({ $ref: `#/definitions/${name}` })
const op = (id: string, schema: string) => ({ get: { operationId: id, responses: { '200': { description: 'OK', schema: ref(schema) } } } })

const local: JsonObject = {
  swagger: '2.0',
  info: { title: 'Kubernetes', version: 'unversioned' },
  paths: { '/apis/apps/v1/deployments': op('listDeployments', 'Deployment') },
  definitions: { Deployment: { type: 'object', properties: { metadata: ref('Meta') } }, Meta: { type: 'object', description: 'local' } },
}

type Doc = { paths: Record<string, { get: { operationId: string; responses: Record<string, { schema: { $ref: string } }> } }>; definitions: Record<string, JsonObject> }

describe('merging an aggregated /openapi/v2 document (kube-openapi rules)', () => {
  it('keeps the first owner of a path and takes only the /apis/ paths of an extension', () => {
    const ext: JsonObject = {
      swagger: '2.0',
      paths: { '/apis/apps/v1/deployments': op('stolen', 'Widget'), '/apis/w.example/v1/widgets': op('listWidgets', 'Widget'), '/healthz': op('health', 'Widget') },
      definitions: { Widget: { type: 'object' } },
    }
    const merged = mergeAggregatedV2(local, [ext]) as unknown as Doc
    assert.equal(merged.paths['/apis/apps/v1/deployments']?.get.operationId, 'listDeployments')
    assert.equal(merged.paths['/apis/w.example/v1/widgets']?.get.operationId, 'listWidgets')
    assert.equal(merged.paths['/healthz'], undefined)
    assert.equal((merged as unknown as JsonObject)['info'], local['info'])
  })

  it('leaves out the definitions no taken path reaches, and keeps those reached through other definitions', () => {
    const ext: JsonObject = {
      paths: { '/apis/w.example/v1/widgets': op('listWidgets', 'WidgetList') },
      definitions: { WidgetList: { type: 'object', properties: { items: { type: 'array', items: ref('Widget') } } }, Widget: { type: 'object' }, Orphan: { type: 'string' } },
    }
    const merged = mergeAggregatedV2(local, [ext]) as unknown as Doc
    assert.deepEqual(Object.keys(merged.definitions), ['Deployment', 'Meta', 'Widget', 'WidgetList'])
  })

  it('shares a definition equal to the one already there, whatever the order of its members', () => {
    const ext: JsonObject = {
      paths: { '/apis/w.example/v1/widgets': op('listWidgets', 'Meta') },
      definitions: { Meta: { description: 'local', type: 'object' } },
    }
    const merged = mergeAggregatedV2(local, [ext]) as unknown as Doc
    assert.equal(merged.definitions['Meta_v2'], undefined)
    assert.equal(merged.paths['/apis/w.example/v1/widgets']?.get.responses['200']?.schema.$ref, '#/definitions/Meta')
  })

  it('renames a colliding, different definition to the first free <name>_vN and rewrites the references to it', () => {
    const first: JsonObject = {
      paths: { '/apis/a.example/v1/as': op('listAs', 'Meta') },
      definitions: { Meta: { type: 'object', description: 'a' } },
    }
    const second: JsonObject = {
      paths: { '/apis/b.example/v1/bs': op('listBs', 'Holder') },
      definitions: { Holder: { type: 'object', properties: { meta: ref('Meta') } }, Meta: { type: 'object', description: 'b' } },
    }
    const merged = mergeAggregatedV2(local, [first, second]) as unknown as Doc
    assert.equal(merged.definitions['Meta']?.['description'], 'local')
    assert.equal(merged.definitions['Meta_v2']?.['description'], 'a')
    assert.equal(merged.definitions['Meta_v3']?.['description'], 'b')
    assert.equal(merged.paths['/apis/a.example/v1/as']?.get.responses['200']?.schema.$ref, '#/definitions/Meta_v2')
    assert.deepEqual(merged.definitions['Holder']?.['properties'], { meta: ref('Meta_v3') })
    assert.deepEqual((local['definitions'] as JsonObject)['Meta'], { type: 'object', description: 'local' }, 'the local document is not changed')
    assert.equal(Object.keys(local['paths'] as JsonObject).length, 1)
  })
})
