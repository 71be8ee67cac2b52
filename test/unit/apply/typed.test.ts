import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApplyInvalidError, applyObject, fieldSetOf, shapeOfType } from '../../../core/apply/index.js'

const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment'

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'nginx',
            image: 'nginx:1.27',
            args: ['-g', 'daemon off;'],
            ports: [{ containerPort: 80 }],
            env: [{ name: 'MODE', value: 'prod' }],
            resources: {},
          },
        ],
        nodeSelector: { disk: 'ssd' },
      },
    },
  },
}

describe('the fields an object sets', () => {
  it('owns a Deployment per field, containers by name, ports by key (protocol defaulted), atomic selector, args and nodeSelector', () => {
    assert.equal(
      JSON.stringify(fieldSetOf(deployment, shapeOfType(DEPLOYMENT)).toFieldsV1()),
      JSON.stringify({
        'f:apiVersion': {},
        'f:kind': {},
        'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:name': {} },
        'f:spec': {
          'f:replicas': {},
          'f:selector': {},
          'f:template': {
            'f:metadata': { 'f:labels': { 'f:app': {} } },
            'f:spec': {
              'f:containers': {
                'k:{"name":"nginx"}': {
                  '.': {},
                  'f:args': {},
                  'f:env': { 'k:{"name":"MODE"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                  'f:image': {},
                  'f:name': {},
                  'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
                  'f:resources': {},
                },
              },
              'f:nodeSelector': {},
            },
          },
        },
      }),
    )
  })

  it('owns set items by value and raw fields as one leaf', () => {
    const cm = { metadata: { finalizers: ['b', 'a'] }, data: { x: '1' } }
    assert.deepEqual(fieldSetOf(cm, shapeOfType('io.k8s.api.core.v1.ConfigMap')).toFieldsV1(), {
      'f:data': { 'f:x': {} },
      'f:metadata': { 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} } },
    })
    const rev = { data: { spec: { a: 1 } }, revision: 1 }
    assert.deepEqual(fieldSetOf(rev, shapeOfType('io.k8s.api.apps.v1.ControllerRevision')).toFieldsV1(), { 'f:data': {}, 'f:revision': {} })
  })
})

describe('applied configurations that cannot be owned', () => {
  const opts = { force: false, now: new Date(0), apiVersion: 'apps/v1', typeName: DEPLOYMENT }
  const refuse = (config: Record<string, unknown>, message: string) =>
    assert.throws(() => applyObject(undefined, config, 'tool', opts), (e: unknown) => e instanceof ApplyInvalidError && e.message === message)

  it('refuses duplicate keys, key-less items, unknown fields and managedFields as upstream words them', () => {
    const twice = structuredClone(deployment)
    twice.spec.template.spec.containers.push({ ...twice.spec.template.spec.containers[0]!, image: 'x' })
    refuse(
      twice,
      'failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name="nginx"]',
    )
    refuse(
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { template: { spec: { containers: [{ image: 'x' }] } } } },
      'failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    )
    refuse(
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replica: 1, paused: true, foo: {} } },
      'failed to create typed patch object (/web; apps/v1, Kind=Deployment): errors:\n  .spec.replica: field not declared in schema\n  .spec.foo: field not declared in schema',
    )
    refuse({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', managedFields: [] } }, 'metadata.managedFields must be nil')
    refuse(
      { apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'web' } },
      'Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1',
    )
  })
})
