/**
 * Container images as upstream checks them: every container names one, in
 * a pod and in the templates controllers stamp pods from (but a
 * StatefulSet's, whose pod spec upstream does not check); only a pod's
 * image must be free of surrounding whitespace (a template may carry one
 * that a tool fills in later). Each refusal is a 422 with upstream's
 * message and leaves nothing stored.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const NS = '/api/v1/namespaces/default'
const APPS = '/apis/apps/v1/namespaces/default'
const BATCH = '/apis/batch/v1/namespaces/default'

let api: TestClient

before(async () => {
  api = await startServer()
})

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) =>
  (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

const container = (image?: string) => ({ name: 'web', ...(image === undefined ? {} : { image }) })
const podSpec = (image?: string, restartPolicy = 'Always') => ({ containers: [container(image)], restartPolicy })
const template = (image?: string, restartPolicy = 'Always') => ({ metadata: { labels: { app: 'web' } }, spec: podSpec(image, restartPolicy) })
const selector = { matchLabels: { app: 'web' } }

/** Each templated kind, its collection, a body with the given image, and the path of its first container's image. */
const TEMPLATED: { kind: string; path: string; body: (name: string, image?: string) => unknown; imageField: string }[] = [
  { kind: 'Deployment', path: `${APPS}/deployments`, body: (name, image) => ({ metadata: { name }, spec: { selector, template: template(image) } }), imageField: 'spec.template.spec.containers[0].image' },
  { kind: 'ReplicaSet', path: `${APPS}/replicasets`, body: (name, image) => ({ metadata: { name }, spec: { selector, template: template(image) } }), imageField: 'spec.template.spec.containers[0].image' },
  { kind: 'DaemonSet', path: `${APPS}/daemonsets`, body: (name, image) => ({ metadata: { name }, spec: { selector, template: template(image) } }), imageField: 'spec.template.spec.containers[0].image' },
  { kind: 'Job', path: `${BATCH}/jobs`, body: (name, image) => ({ metadata: { name }, spec: { template: { spec: podSpec(image, 'Never') } } }), imageField: 'spec.template.spec.containers[0].image' },
  {
    kind: 'CronJob',
    path: `${BATCH}/cronjobs`,
    body: (name, image) => ({ metadata: { name }, spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: podSpec(image, 'Never') } } } } }),
    imageField: 'spec.jobTemplate.spec.template.spec.containers[0].image',
  },
  { kind: 'ReplicationController', path: `${NS}/replicationcontrollers`, body: (name, image) => ({ metadata: { name }, spec: { selector: { app: 'web' }, template: template(image) } }), imageField: 'spec.template.spec.containers[0].image' },
  { kind: 'PodTemplate', path: `${NS}/podtemplates`, body: (name, image) => ({ metadata: { name }, template: template(image) }), imageField: 'template.spec.containers[0].image' },
]

describe('images in pod templates', () => {
  for (const t of TEMPLATED) {
    it(`a ${t.kind} wants an image for every container, and takes one with surrounding spaces`, async () => {
      for (const [name, image] of [['no-image', undefined], ['empty-image', '']] as const) {
        const res = await api.post(t.path, t.body(name, image))
        assert.equal(res.status, 422, res.text)
        assert.deepEqual(causes(res.body), [`${t.imageField}: Required value`])
        assert.equal((await api.get(`${t.path}/${name}`)).status, 404, `${name} was stored`)
      }
      const spaced = await api.post(t.path, t.body('spaced-image', 'nginx:1.27 '))
      assert.equal(spaced.status, 201, spaced.text)
    })
  }
})

describe("a StatefulSet's template", () => {
  it('is not checked beyond its labels, annotations and restart policy, as upstream leaves it: no image is asked for', async () => {
    const res = await api.post(`${APPS}/statefulsets`, { metadata: { name: 'no-image' }, spec: { serviceName: 'web', selector, template: template() } })
    assert.equal(res.status, 201, res.text)
  })
})

describe('images of a pod', () => {
  const PODS = `${NS}/pods`

  it('wants an image for every container, init containers too', async () => {
    const res = await api.post(PODS, { metadata: { name: 'no-image' }, spec: { initContainers: [{ name: 'init' }], containers: [container()] } })
    assert.equal(res.status, 422, res.text)
    assert.deepEqual(causes(res.body), ['spec.containers[0].image: Required value', 'spec.initContainers[0].image: Required value'])
    assert.equal((await api.get(`${PODS}/no-image`)).status, 404)
  })

  it('wants images without leading or trailing whitespace', async () => {
    const res = await api.post(PODS, { metadata: { name: 'spaced' }, spec: { initContainers: [{ name: 'init', image: ' busybox' }], containers: [container('nginx:1.27 ')] } })
    assert.equal(res.status, 422, res.text)
    assert.deepEqual(causes(res.body), [
      'spec.containers[0].image: Invalid value: "nginx:1.27 ": must not have leading or trailing whitespace',
      'spec.initContainers[0].image: Invalid value: " busybox": must not have leading or trailing whitespace',
    ])
    assert.equal((await api.get(`${PODS}/spaced`)).status, 404)
  })

  it('takes a pod whose images are plain', async () => {
    const res = await api.post(PODS, { metadata: { name: 'plain' }, spec: podSpec('nginx:1.27') })
    assert.equal(res.status, 201, res.text)
  })
})
