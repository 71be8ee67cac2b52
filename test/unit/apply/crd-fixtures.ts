/** A CronTab-like custom resource schema with one field of every kind apply distinguishes. */
import type { JSONSchemaProps } from '../../../core/crd-schema/schema.js'

export const API_VERSION = 'stable.example.com/v1'
export const TYPE_NAME = 'com.example.stable.v1.CronTab'

export const cronTabSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        cronSpec: { type: 'string' },
        replicas: { type: 'integer' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
          items: {
            type: 'object',
            required: ['containerPort'],
            properties: {
              containerPort: { type: 'integer' },
              protocol: { type: 'string', default: 'TCP' },
              name: { type: 'string' },
            },
          },
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        args: { type: 'array', items: { type: 'string' } },
        steps: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { app: { type: 'string' } } },
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { mode: { type: 'string' } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        port: { 'x-kubernetes-int-or-string': true },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
}

type Obj = Record<string, unknown>

export const cronTab = (spec: Obj | undefined, extra: Obj = {}): Obj => ({
  apiVersion: API_VERSION,
  kind: 'CronTab',
  metadata: { name: 'ct', namespace: 'default' },
  ...(spec ? { spec } : {}),
  ...extra,
})
