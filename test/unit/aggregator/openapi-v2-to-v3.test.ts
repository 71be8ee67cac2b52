import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { openApiV2ToV3, openApiV2ToV3InSteps } from '../../../core/aggregator/openapi-v2-to-v3.js'
import { openApiV3Response } from '../../../core/api/openapi-responses.js'
import { Catalogue } from '../../../core/resources/catalogue.js'
import { runInSlices } from '../../../core/machinery/time-slice.js'

describe('an extension server\'s /openapi/v2 document in v3 shape (for a server without /openapi/v3)', () => {
  const v2 = {
    swagger: '2.0',
    info: { title: 'w', version: 'v1' },
    consumes: ['application/json', 'application/yaml'],
    produces: ['application/json'],
    paths: {
      '/apis/w.example/v1/widgets': {
        parameters: [{ name: 'pretty', in: 'query', type: 'string', uniqueItems: true }],
        post: {
          operationId: 'createWidget',
          parameters: [
            { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/Widget' } },
            { name: 'dryRun', in: 'query', type: 'string', description: 'dry run' },
          ],
          responses: { '201': { description: 'Created', schema: { $ref: '#/definitions/Widget' } }, '401': { description: 'Unauthorized' } },
        },
      },
    },
    definitions: { Widget: { type: 'object', properties: { items: { type: 'array', items: { $ref: '#/definitions/Part' } } } }, Part: { type: 'string' } },
    securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
    security: [{ BearerToken: [] }],
  }

  it('turns body parameters into request bodies, types into schemas, response schemas into content, definitions into components', () => {
    assert.deepEqual(openApiV2ToV3(v2), {
      openapi: '3.0.0',
      info: { title: 'w', version: 'v1' },
      paths: {
        '/apis/w.example/v1/widgets': {
          parameters: [{ name: 'pretty', in: 'query', schema: { type: 'string', uniqueItems: true } }],
          post: {
            operationId: 'createWidget',
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Widget' } }, 'application/yaml': { schema: { $ref: '#/components/schemas/Widget' } } },
              required: true,
            },
            parameters: [{ name: 'dryRun', in: 'query', description: 'dry run', schema: { type: 'string' } }],
            responses: {
              '201': { description: 'Created', content: { 'application/json': { schema: { $ref: '#/components/schemas/Widget' } } } },
              '401': { description: 'Unauthorized' },
            },
          },
        },
      },
      components: {
        schemas: { Widget: { type: 'object', properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Part' } } } }, Part: { type: 'string' } },
        securitySchemes: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
      },
      security: [{ BearerToken: [] }],
    })
  })

  it('converts a document of megabytes in time slices, to the same result', async () => {
    // 14 MiB of definitions, as a hostile or merely large extension server may publish: converted at once it
    // held the thread for half a second.
    const definitions: Record<string, unknown> = {}
    for (let i = 0; i < 40_000; i++) {
      definitions[`io.example.v1.Thing${i}`] = { type: 'object', properties: { a: { type: 'string', description: 'x'.repeat(200) }, b: { $ref: `#/definitions/io.example.v1.Thing${(i + 1) % 40_000}` } } }
    }
    const doc = { swagger: '2.0', info: { title: 'big', version: 'v1' }, paths: {}, definitions }
    let done = false
    const converting = runInSlices(openApiV2ToV3InSteps(doc)).finally(() => (done = true))
    let turns = 0
    while (!done) {
      await nextTurn()
      turns++
    }
    const converted = await converting
    assert.deepEqual(converted, openApiV2ToV3(doc))
    assert.equal((converted['components'] as { schemas: Record<string, { properties: { b: { $ref: string } } }> }).schemas['io.example.v1.Thing0']!.properties.b.$ref, '#/components/schemas/io.example.v1.Thing1')
    assert.ok(turns > 10, `the conversion let the event loop turn ${turns} times`)
  })
})

describe('an extension server\'s v3 document served from the aggregator', () => {
  it('is written in time slices when it is megabytes, other work running meanwhile', async () => {
    const schemas: Record<string, unknown> = {}
    for (let i = 0; i < 40_000; i++) schemas[`io.example.v1.Thing${i}`] = { type: 'object', description: 'x'.repeat(200) }
    const doc = { openapi: '3.0.0', info: { title: 'big', version: 'v1' }, paths: {}, components: { schemas } }
    const key = 'apis/big.example.com/v1'
    const source = { v2: () => [], v3: () => new Map([[key, { doc, hash: 'ABC' }]]) }
    let done = false
    const answering = Promise.resolve(openApiV3Response(new URL(`https://server/openapi/v3/${key}`), new Catalogue([]), source)).finally(() => (done = true))
    let turns = 0
    while (!done) {
      await nextTurn()
      turns++
    }
    const res = await answering
    assert.equal(res.status, 200)
    assert.deepEqual(await res.json(), doc)
    assert.ok(turns > 10, `writing the document let the event loop turn ${turns} times`)
  })
})
