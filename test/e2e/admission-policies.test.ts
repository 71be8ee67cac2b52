/**
 * A ValidatingAdmissionPolicy with a ConfigMap as its parameters, applied
 * with kubectl against the daemon: a deployment over the limit is refused in
 * upstream's words and not stored, one within it goes in, and a changed
 * parameter takes effect without a restart.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon, eventually } from './daemon.js'

const policy = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'replica-limit' },
  spec: {
    failurePolicy: 'Fail',
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] },
    validations: [
      {
        expression: 'object.spec.replicas <= int(params.data.maxReplicas)',
        messageExpression: "'replicas must be at most ' + params.data.maxReplicas",
        reason: 'Invalid',
      },
    ],
  },
}
const binding = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name: 'replica-limit' },
  spec: { policyName: 'replica-limit', validationActions: ['Deny'], paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' } },
}
const deployment = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'default' },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
  },
})

describe('ValidatingAdmissionPolicy through kubectl', () => {
  let daemon: Daemon
  before(async () => {
    daemon = await Daemon.start()
  })
  after(async () => {
    await daemon?.stop()
  })

  it('refuses what its ConfigMap parameter forbids, and follows a changed parameter', async () => {
    await daemon.ok('create', 'configmap', 'limits', '--from-literal=maxReplicas=3')
    await daemon.ok('apply', '-f', daemon.manifest('policy.json', JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [policy, binding] })))
    const big = daemon.manifest('big.json', JSON.stringify(deployment('big', 5)))
    let refused = await daemon.kubectl('apply', '-f', big)
    await eventually(async () => {
      refused = await daemon.kubectl('apply', '-f', big)
      assert.notEqual(refused.code, 0)
    })
    assert.match(
      refused.stderr,
      /The deployments "big" is invalid: : ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: replicas must be at most 3/,
    )
    assert.equal((await daemon.kubectl('get', 'deployment', 'big')).code, 1, 'nothing was stored')
    await daemon.ok('apply', '-f', daemon.manifest('small.json', JSON.stringify(deployment('small', 2))))

    await daemon.ok('patch', 'configmap', 'limits', '--type=merge', '-p', '{"data":{"maxReplicas":"10"}}')
    await eventually(async () => assert.equal((await daemon.kubectl('apply', '-f', big)).code, 0))
  })
})
