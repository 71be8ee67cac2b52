import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'

function pod(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec } }
}

describe('pods through the API', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  it('stores a created pod with upstream defaults and a Pending status', async () => {
    const created = await client.post(PODS, pod('web', { containers: [{ name: 'app', image: 'nginx', ports: [{ containerPort: 80 }] }] }))
    assert.equal(created.status, 201, created.text)
    const read = await client.get(`${PODS}/web`)
    assert.equal(read.status, 200)
    const spec = read.body.spec
    assert.equal(spec.restartPolicy, 'Always')
    assert.equal(spec.dnsPolicy, 'ClusterFirst')
    assert.equal(spec.terminationGracePeriodSeconds, 30)
    assert.equal(spec.schedulerName, 'default-scheduler')
    assert.equal(spec.serviceAccountName, 'default')
    assert.equal(spec.enableServiceLinks, true)
    assert.equal(spec.priority, 0)
    assert.equal(spec.preemptionPolicy, 'PreemptLowerPriority')
    assert.deepEqual(spec.tolerations, [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ])
    assert.deepEqual(spec.securityContext, {})
    assert.equal(spec.containers[0].imagePullPolicy, 'Always')
    assert.equal(spec.containers[0].terminationMessagePath, '/dev/termination-log')
    assert.equal(spec.containers[0].ports[0].protocol, 'TCP')
    assert.deepEqual(read.body.status, { phase: 'Pending', qosClass: 'BestEffort' })
  })

  it('refuses an invalid pod with every cause, and stores nothing', async () => {
    const bad = pod('broken', {
      restartPolicy: 'Sometimes',
      containers: [
        { name: 'app', image: 'nginx', ports: [{ containerPort: 70000 }] },
        { name: 'app', image: '' },
      ],
    })
    const res = await client.post(PODS, bad)
    assert.equal(res.status, 422)
    assert.equal(res.body.reason, 'Invalid')
    assert.deepEqual(
      res.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`),
      [
        'spec.containers[1].name: Duplicate value: "app"',
        'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
        'spec.containers[1].image: Required value',
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      ],
    )
    assert.equal((await client.get(`${PODS}/broken`)).status, 404)
  })

  it('refuses a privileged container unless the server allows it', async () => {
    const privileged = pod('root', { containers: [{ name: 'app', image: 'busybox', securityContext: { privileged: true } }] })
    const refused = await client.post(PODS, privileged)
    assert.equal(refused.status, 422)
    assert.equal(
      refused.body.message,
      'Pod "root" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy',
    )
    const permissive = await startServer({ allowPrivileged: true })
    assert.equal((await permissive.post(PODS, privileged)).status, 201)
  })

  it("lets an update change a container's image, and refuses any other spec change", async () => {
    await client.post(PODS, pod('upd'))
    const current = (await client.get(`${PODS}/upd`)).body
    current.spec.containers[0].image = 'nginx:1.28'
    const updated = await client.put(`${PODS}/upd`, current)
    assert.equal(updated.status, 200, updated.text)
    assert.equal(updated.body.spec.containers[0].image, 'nginx:1.28')

    updated.body.spec.restartPolicy = 'Never'
    const refused = await client.put(`${PODS}/upd`, updated.body)
    assert.equal(refused.status, 422)
    const [cause] = refused.body.details.causes
    assert.equal(cause.field, 'spec')
    assert.match(cause.message, /^Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`,/)
    assert.match(cause.message, /- spec\.restartPolicy: "Always"\n {2}\+ spec\.restartPolicy: "Never"/)
  })

  it('keeps the status a client sends on update out of the pod', async () => {
    const current = (await client.get(`${PODS}/upd`)).body
    current.status = { phase: 'Running' }
    const updated = await client.put(`${PODS}/upd`, current)
    assert.equal(updated.status, 200, updated.text)
    assert.equal(updated.body.status.phase, 'Pending')
  })

  it('deletes a pod', async () => {
    await client.post(PODS, pod('gone'))
    assert.equal((await client.delete(`${PODS}/gone`)).status, 200)
    assert.equal((await client.get(`${PODS}/gone`)).status, 404)
  })

  it('defaults and validates pod templates, whose template stays mutable', async () => {
    const path = '/api/v1/namespaces/default/podtemplates'
    const template = {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 'tpl' },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
    }
    const created = await client.post(path, template)
    assert.equal(created.status, 201, created.text)
    assert.equal(created.body.template.spec.restartPolicy, 'Always')
    assert.equal(created.body.template.spec.containers[0].imagePullPolicy, 'IfNotPresent')
    assert.equal(created.body.template.spec.enableServiceLinks, undefined)

    created.body.template.spec.restartPolicy = 'Never'
    assert.equal((await client.put(`${path}/tpl`, created.body)).status, 200)

    const empty = await client.post(path, { ...template, metadata: { name: 'empty' }, template: { spec: { containers: [] } } })
    assert.equal(empty.status, 422)
    assert.equal(empty.body.message, 'PodTemplate "empty" is invalid: template.spec.containers: Required value')
  })
})
