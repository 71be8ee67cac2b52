/**
 * A ValidatingAdmissionPolicy whose binding selects many parameter
 * objects gives each its own cost budget, as upstream does, so one request
 * may compute for a long while: other requests on the same server are
 * answered meanwhile.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventually, startServer } from './harness.js'

const ADM = '/apis/admissionregistration.k8s.io/v1'
const PARAMS = 8
const VALIDATIONS = 5

const range = (n: number): string => `[${Array.from({ length: n }, (_, i) => i).join(',')}]`
/** Costs close to the per-expression limit (about 200,000 steps), for objects labelled `slow` only. */
const COSTLY = `!('slow' in object.metadata.?labels.orValue({})) || ${range(1000)}.all(i, ${range(200)}.all(j, j >= 0))`

describe('ValidatingAdmissionPolicy with many parameters', () => {
  it('lets other requests be answered while one request is evaluated', async () => {
    const client = await startServer({ admission: { plugins: ['ValidatingAdmissionPolicy'] } })
    assert.equal((await client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'params' } })).status, 201)
    for (let i = 0; i < PARAMS; i++) {
      const param = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `p${i}`, labels: { param: 'yes' } } }
      assert.equal((await client.post('/api/v1/namespaces/params/configmaps', param)).status, 201)
    }
    const policy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'costly' },
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'default' } },
        },
        validations: [{ expression: "object.metadata.name != 'probe-' + params.metadata.name" }, ...Array.from({ length: VALIDATIONS }, () => ({ expression: COSTLY }))],
      },
    }
    assert.equal((await client.post(`${ADM}/validatingadmissionpolicies`, policy)).status, 201)
    const binding = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'costly' },
      spec: { policyName: 'costly', validationActions: ['Deny'], paramRef: { namespace: 'params', selector: { matchLabels: { param: 'yes' } }, parameterNotFoundAction: 'Deny' } },
    }
    assert.equal((await client.post(`${ADM}/validatingadmissionpolicybindings`, binding)).status, 201)
    // The last parameter is in use once a probe named after it is refused.
    const probe = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `probe-p${PARAMS - 1}` } }
    await eventually('the policy sees every parameter', async () => (await client.post('/api/v1/namespaces/default/configmaps?dryRun=All', probe)).status === 422, 60_000)

    const finished: string[] = []
    const slow = client.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'slow', labels: { slow: 'yes' } } }).then((reply) => {
      finished.push('slow')
      return reply
    })
    // A timer fires only when the thread is free: with the evaluation in one piece, not before it ends.
    await new Promise((resolve) => setTimeout(resolve, 20))
    const quick = await client.get('/api/v1/namespaces/params/configmaps/p0')
    finished.push('quick')
    const reply = await slow

    assert.equal(quick.status, 200)
    assert.equal(reply.status, 201, reply.text.slice(0, 300))
    assert.deepEqual(finished, ['quick', 'slow'], 'the other request was answered while the costly one computed')
  })
})
