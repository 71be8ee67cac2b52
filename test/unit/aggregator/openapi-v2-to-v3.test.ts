import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openApiV2ToV3 } from '../../../core/aggregator/openapi-v2-to-v3.js'

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
})
