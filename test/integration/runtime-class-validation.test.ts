/**
 * node.k8s.io/v1 RuntimeClass validation against upstream's
 * (pkg/apis/node/validation): the handler is a DNS label fixed at creation,
 * the overhead a list of container resources, the scheduling a node selector
 * of labels with valid tolerations listed once. Invalid classes are refused
 * with upstream's messages and nothing is stored.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const CLASSES = '/apis/node.k8s.io/v1/runtimeclasses'
const DNS_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

const invalid = (name: string, detail: string) => `RuntimeClass.node.k8s.io "${name}" is invalid: ${detail}`

/** An object to create: its name, and whatever else the test sends. */
type Named = { metadata: { name: string } } & Record<string, unknown>

let api: TestClient
before(async () => {
  api = await startServer()
})
after(() => api.server.shutdown())

async function refused(body: Named, message: string): Promise<void> {
  const res = await api.post(CLASSES, body)
  assert.equal(res.status, 422, res.text)
  assert.equal(res.body.message, message)
  assert.equal((await api.get(`${CLASSES}/${body.metadata.name}`)).status, 404)
}

describe('RuntimeClass', () => {
  it('stores a valid class with overhead and scheduling', async () => {
    const res = await api.post(CLASSES, {
      metadata: { name: 'gvisor' },
      handler: 'runsc',
      overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      scheduling: {
        nodeSelector: { 'runtime/gvisor': 'true' },
        tolerations: [
          { key: 'runtime', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' },
          { key: 'runtime', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
          { operator: 'Exists' },
        ],
      },
    })
    assert.equal(res.status, 201, res.text)
  })

  it('requires the handler, a DNS label', async () => {
    await refused({ metadata: { name: 'no-handler' } }, invalid('no-handler', `handler: Invalid value: "": ${DNS_LABEL}`))
    await refused({ metadata: { name: 'bad-handler' }, handler: 'Bad_Value!' }, invalid('bad-handler', `handler: Invalid value: "Bad_Value!": ${DNS_LABEL}`))
  })

  it('checks the overhead as a container’s limits, under overhead.limits', async () => {
    await refused(
      { metadata: { name: 'bad-overhead' }, handler: 'runsc', overhead: { podFixed: { cpu: '-1' } } },
      invalid('bad-overhead', 'overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    )
  })

  it('checks the node selector and each toleration', async () => {
    await refused(
      {
        metadata: { name: 'bad-scheduling' },
        handler: 'runsc',
        scheduling: {
          nodeSelector: { 'bad key': 'v' },
          tolerations: [
            { key: 'a', operator: 'Exists', value: 'x', effect: 'NoSchedule', tolerationSeconds: 5 },
            { operator: 'Equal', value: 'v' },
            { key: 'b', operator: 'Foo', effect: 'Bar' },
            { key: 'c', value: 'v'.repeat(64) },
          ],
        },
      },
      invalid(
        'bad-scheduling',
        `[scheduling.nodeSelector: Invalid value: "bad key": ${NAME_PART}, ` +
          "scheduling.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set, " +
          'scheduling.tolerations[0].operator: Invalid value: core.Toleration{Key:"a", Operator:"Exists", Value:"x", Effect:"NoSchedule", TolerationSeconds:(*int64)(&5)}: ' +
          "value must be empty when `operator` is 'Exists', " +
          'scheduling.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys", ' +
          'scheduling.tolerations[2].operator: Unsupported value: "Foo": supported values: "Equal", "Exists", ' +
          'scheduling.tolerations[2].effect: Unsupported value: "Bar": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute", ' +
          `scheduling.tolerations[3].operator: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters]`,
      ),
    )
  })

  it('lists each toleration once: the same key, operator, value and effect twice is a duplicate', async () => {
    await refused(
      {
        metadata: { name: 'twice' },
        handler: 'runsc',
        scheduling: {
          tolerations: [
            { key: 'c', operator: 'Exists', effect: 'NoExecute' },
            { key: 'c', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 3 },
          ],
        },
      },
      invalid('twice', 'scheduling.tolerations[1]: Duplicate value: core.Toleration{Key:"c", Operator:"Exists", Value:"", Effect:"NoExecute", TolerationSeconds:(*int64)(&3)}'),
    )
  })

  it('keeps the handler as created and lets the rest change', async () => {
    assert.equal((await api.post(CLASSES, { metadata: { name: 'kata' }, handler: 'kata' })).status, 201)
    const path = `${CLASSES}/kata`
    const changed = await api.update(path, (rc) => ({ ...rc, handler: 'kata-qemu' }))
    assert.equal(changed.status, 422, changed.text)
    assert.equal(changed.body.message, invalid('kata', 'handler: Invalid value: "kata-qemu": field is immutable'))
    assert.equal((await api.get(path)).body.handler, 'kata')
    const labelled = await api.update(path, (rc) => ({ ...rc, metadata: { ...rc.metadata, labels: { tier: 'secure' } }, scheduling: { nodeSelector: { kata: 'true' } } }))
    assert.equal(labelled.status, 200, labelled.text)
  })

  it('checks the whole class on update too', async () => {
    assert.equal((await api.post(CLASSES, { metadata: { name: 'runc' }, handler: 'runc' })).status, 201)
    const res = await api.update(`${CLASSES}/runc`, (rc) => ({ ...rc, scheduling: { tolerations: [{ key: 'a', operator: 'Sometimes' }] } }))
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.message, invalid('runc', 'scheduling.tolerations[0].operator: Unsupported value: "Sometimes": supported values: "Equal", "Exists"'))
  })
})
