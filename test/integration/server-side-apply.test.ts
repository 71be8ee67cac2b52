import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments'
const CM = '/api/v1/namespaces/default/configmaps'
const APPLY = 'application/apply-patch+yaml'

const config = (replicas: number, image: string, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: ${image}
${extra}`

type Entry = { manager: string; operation: string; apiVersion: string; fieldsV1: Record<string, unknown>; subresource?: string }

const managers = (obj: { metadata: { managedFields?: Entry[] } }) =>
  (obj.metadata.managedFields ?? []).map((e) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`)

describe('server-side apply', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  it('creates with 201 and records the applier as owner of exactly what it applied', async () => {
    const res = await client.patch(`${DEPLOYS}/web?fieldManager=alice`, config(2, 'nginx:1.26'), APPLY)
    assert.equal(res.status, 201, res.text)
    assert.equal(res.body.spec.replicas, 2)
    assert.equal(res.body.spec.revisionHistoryLimit, 10, 'defaulted as any create')
    assert.deepEqual(managers(res.body), ['alice/Apply'])
    const [entry] = res.body.metadata.managedFields as Entry[]
    assert.equal(entry?.apiVersion, 'apps/v1')
    assert.deepEqual(Object.keys(entry?.fieldsV1 ?? {}).sort(), ['f:spec'])
    assert.ok(!('f:revisionHistoryLimit' in ((entry?.fieldsV1['f:spec'] ?? {}) as object)), 'defaults are nobody’s')
  })

  it('answers 409 naming the manager and field when another applier changes an owned field, and takes it with force', async () => {
    const conflict = await client.patch(`${DEPLOYS}/web?fieldManager=bob`, config(5, 'nginx:1.26'), APPLY)
    assert.equal(conflict.status, 409, conflict.text)
    assert.equal(conflict.body.reason, 'Conflict')
    assert.equal(conflict.body.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas')
    assert.deepEqual(conflict.body.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }])
    const forced = await client.patch(`${DEPLOYS}/web?fieldManager=bob&force=true`, config(5, 'nginx:1.26'), APPLY)
    assert.equal(forced.status, 200, forced.text)
    assert.equal(forced.body.spec.replicas, 5)
    assert.deepEqual(managers(forced.body).sort(), ['alice/Apply', 'bob/Apply'])
  })

  it('records ordinary writes as Update entries, and removes what an applier alone stops applying', async () => {
    const patched = await client.patch(`${DEPLOYS}/web?fieldManager=carol`, { metadata: { labels: { team: 'x' } } }, 'application/merge-patch+json')
    assert.equal(patched.status, 200, patched.text)
    assert.ok(managers(patched.body).includes('carol/Update'))
    const withEnv = await client.patch(`${DEPLOYS}/web?fieldManager=alice`, config(5, 'nginx:1.26', '        env:\n        - {name: A, value: "1"}\n'), APPLY)
    assert.equal(withEnv.status, 200, withEnv.text)
    assert.deepEqual(withEnv.body.spec.template.spec.containers[0].env, [{ name: 'A', value: '1' }])
    const without = await client.patch(`${DEPLOYS}/web?fieldManager=alice`, config(5, 'nginx:1.26'), APPLY)
    assert.equal(without.status, 200, without.text)
    assert.equal(without.body.spec.template.spec.containers[0].env, undefined, 'alice alone owned env: it goes')
    assert.equal(without.body.metadata.labels.team, 'x', 'carol’s label stays')
  })

  it('applies to the status subresource under its own entry', async () => {
    const res = await client.patch(
      `${DEPLOYS}/web/status?fieldManager=controller`,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nstatus:\n  replicas: 5\n',
      APPLY,
    )
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.status.replicas, 5)
    assert.ok(managers(res.body).includes('controller/Apply/status'))
  })

  it('refuses apply without a field manager, force on other patches, a wrong apiVersion and unknown fields', async () => {
    const noManager = await client.patch(`${CM}/x`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n', APPLY)
    assert.equal(noManager.status, 422)
    assert.equal(noManager.body.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')
    const force = await client.patch(`${DEPLOYS}/web?force=true`, {}, 'application/merge-patch+json')
    assert.equal(force.status, 422)
    assert.equal(force.body.message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch')
    const version = await client.patch(`${CM}/x?fieldManager=a`, 'apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: x\n', APPLY)
    assert.equal(version.status, 400)
    assert.match(version.body.message, /^Incorrect version specified in apply patch/)
    const unknown = await client.patch(`${CM}/x?fieldManager=a`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ncolour: blue\n', APPLY)
    assert.equal(unknown.status, 400)
    assert.match(unknown.body.message, /\.colour: field not declared in schema/)
    assert.equal((await client.get(`${CM}/x`)).status, 404, 'nothing created')
  })

  it('reads an apply body and its options as upstream does: the configuration a map, the version checked first, force any word but false', async () => {
    const refusals: [string, string][] = [
      ['[]', 'error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}'],
      ['just words', 'error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {}'],
      ['', 'Incorrect version specified in apply patch. Specified patch version: , expected: v1'],
      ['null', 'Incorrect version specified in apply patch. Specified patch version: , expected: v1'],
      // The version before the name: a configuration naming another object and no version is refused for its version.
      ['metadata:\n  name: other\n', 'Incorrect version specified in apply patch. Specified patch version: , expected: v1'],
    ]
    for (const [body, message] of refusals) {
      const res = await client.patch(`${CM}/y?fieldManager=a`, body, APPLY)
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
      assert.equal(res.body.message, message)
    }
    const badYaml = await client.patch(`${CM}/y?fieldManager=a`, 'data:\n  a: [', APPLY)
    assert.equal(badYaml.status, 400)
    assert.match(badYaml.body.message, /^error decoding YAML: error converting YAML to JSON: yaml: /)
    assert.equal((await client.get(`${CM}/y`)).status, 404, 'nothing created')
    // Owned by one applier, taken by another whose force is any word but "0" or "false".
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  a: "1"\n'
    assert.equal((await client.patch(`${CM}/y?fieldManager=a`, cm, APPLY)).status, 201)
    const taken = cm.replace('"1"', '"2"')
    for (const word of ['false', 'FALSE', '0']) assert.equal((await client.patch(`${CM}/y?fieldManager=b&force=${word}`, taken, APPLY)).status, 409, word)
    const forced = await client.patch(`${CM}/y?fieldManager=b&force=yes`, taken, APPLY)
    assert.equal(forced.status, 200, forced.text)
    assert.deepEqual(forced.body.data, { a: '2' })
  })

  it('dry-runs an apply: the would-be object, nothing stored', async () => {
    const res = await client.patch(`${CM}/dry?fieldManager=a&dryRun=All`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\ndata:\n  k: v\n', APPLY)
    assert.equal(res.status, 201, res.text)
    assert.deepEqual(res.body.data, { k: 'v' })
    assert.equal((await client.get(`${CM}/dry`)).status, 404)
  })
})
