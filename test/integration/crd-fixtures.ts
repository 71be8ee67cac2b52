/** CustomResourceDefinitions the custom resource tests share, and the wait until one is established. */
import assert from 'node:assert/strict'
import { eventually, type TestClient } from './harness.js'

export const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

/** The CronTab of upstream's documentation, with a status and scale subresource, columns and rules. */
export function cronTabDefinition(overrides: { versions?: unknown[]; scope?: string; names?: Record<string, unknown> } = {}) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com',
      scope: overrides.scope ?? 'Namespaced',
      names: overrides.names ?? { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'], categories: ['all'] },
      versions: overrides.versions ?? [cronTabVersion('v1', true)],
    },
  }
}

/** A namespaced Widget of `group`, served and stored as v1 with `openAPIV3Schema`. */
export function widgetDefinition(group: string, openAPIV3Schema: Record<string, unknown>) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema } }],
    },
  }
}

/** A namespaced `kind` of `group`, served and stored as v1, whose `spec` field has the schema `spec` (its rules and all). */
export function specSchemaDefinition(group: string, plural: string, kind: string, spec: Record<string, unknown>) {
  return {
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { plural, kind },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  }
}

export function cronTabVersion(name: string, storage: boolean, served = true) {
  return {
    name,
    served,
    storage,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
              image: { type: 'string' },
              replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
              color: { type: 'string', enum: ['red', 'green', 'blue'] },
              selector: { type: 'string' },
            },
            required: ['cronSpec'],
            'x-kubernetes-validations': [
              { rule: "!has(self.image) || self.image != 'forbidden'", message: 'image may not be forbidden', fieldPath: '.image' },
            ],
          },
          status: {
            type: 'object',
            properties: { replicas: { type: 'integer' }, labelSelector: { type: 'string' }, phase: { type: 'string' } },
          },
        },
      },
    },
    subresources: {
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
    },
    additionalPrinterColumns: [
      { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec', description: 'The cron spec' },
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
    selectableFields: [{ jsonPath: '.spec.color' }],
  }
}

export function cronTab(name: string, spec: Record<string, unknown> = { cronSpec: '* * * * */5', image: 'cron' }, apiVersion = 'stable.example.com/v1') {
  return { apiVersion, kind: 'CronTab', metadata: { name }, spec }
}


/** Creates the definition and waits until it is Established. */
export async function installDefinition(api: TestClient, crd: { metadata: { name: string } }): Promise<void> {
  const res = await api.post(CRDS, crd)
  assert.equal(res.status, 201, res.text)
  await eventually(`${crd.metadata.name} is established`, async () => {
    const got = await api.get(`${CRDS}/${crd.metadata.name}`)
    return got.body.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True') ?? false
  })
}

/** Creates `definition` (201) and waits until its resource at `path` is served. */
export async function createServedDefinition(client: TestClient, definition: object, path: string, waitMs = 30_000): Promise<void> {
  const written = await client.post(CRDS, definition)
  assert.equal(written.status, 201, written.text.slice(-300))
  await eventually(`${path} is served`, async () => (await client.get(path)).status === 200, waitMs)
}
