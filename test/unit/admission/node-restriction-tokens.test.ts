import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkNodeTokenRequest, type NodeTokenRules } from '../../../core/admission/builtin/node-restriction-tokens.js'
import type { Authorizer } from '../../../core/authz/authorizer.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { serviceAccounts } from '../../../core/resources/core/serviceaccounts.js'
import { attributes, forbiddenMessage } from './admission-fixture.js'

const kubelet = { username: 'system:node:n1', groups: ['system:nodes'] }
const obj = (name: string, rest: Record<string, unknown>, namespace?: string) => ({ metadata: { name, ...(namespace ? { namespace } : {}) }, ...rest }) as KubeObject

const pod = obj('web', { spec: { nodeName: 'n1', volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }, { name: 'data', persistentVolumeClaim: { claimName: 'data' } }] } }, 'default')
pod.metadata.uid = 'pod-uid'
const objects = new Map<string, KubeObject>([
  ['claim/default/web-scratch', obj('web-scratch', { spec: { volumeName: 'pv-scratch' } })],
  ['volume/pv-scratch', obj('pv-scratch', { spec: { csi: { driver: 'scratch.csi' } } })],
  ['driver/scratch.csi', obj('scratch.csi', { spec: { tokenRequests: [{ audience: 'scratch-aud' }] } })],
  ['claim/default/data', obj('data', { spec: { volumeName: 'pv-gone' } })],
])
const asked: string[] = []
const authorizer: Authorizer = {
  authorize: async (attrs) => {
    asked.push(`${attrs.verb} ${attrs.resource} ${attrs.namespace}/${attrs.name}`)
    return { decision: attrs.resource === 'granted' ? 'allow' : 'no-opinion', reason: '' }
  },
}
const rules: NodeTokenRules = {
  pod: async (_ns, name) => (name === 'web' ? pod : undefined),
  audiences: {
    authorizer,
    reads: {
      csiDriver: async (name) => objects.get(`driver/${name}`),
      claim: async (ns, name) => objects.get(`claim/${ns}/${name}`),
      volume: async (name) => objects.get(`volume/${name}`),
    },
  },
}

function request(audiences: string[]) {
  const object = obj('robot', { spec: { audiences, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'pod-uid' } } })
  return attributes(serviceAccounts, { object, name: 'robot', subresource: 'token', user: kubelet })
}

describe("NodeRestriction's token audiences", () => {
  it("allows an audience a CSI driver requests for the pod's ephemeral claim, past a claim whose volume is gone", async () => {
    await checkNodeTokenRequest('n1', request(['scratch-aud']), rules)
  })

  it('names the volume it could not read when no volume names the audience, without asking the authorizer', async () => {
    asked.length = 0
    assert.equal(
      await forbiddenMessage(() => checkNodeTokenRequest('n1', request(['granted']), rules)),
      'serviceaccounts "robot" is forbidden: error validating audience "granted": persistentvolume "pv-gone" not found',
    )
    assert.deepEqual(asked, [])
  })

  it('asks the authorizer for an audience the volumes do not name, for the service account', async () => {
    const bare = { ...rules, pod: async () => ({ metadata: { name: 'web', namespace: 'default', uid: 'pod-uid' }, spec: { nodeName: 'n1' } }) as KubeObject }
    asked.length = 0
    await checkNodeTokenRequest('n1', request(['granted']), bare)
    assert.deepEqual(asked, ['request-serviceaccounts-token-audience granted default/robot'])
    assert.equal(
      await forbiddenMessage(() => checkNodeTokenRequest('n1', request([]), bare)),
      'serviceaccounts "robot" is forbidden: audience "" not found in pod spec volume, system:node:n1 is not authorized to request tokens for this audience',
    )
  })
})
