import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { forbiddenNodeLabels, isKubeletLabel, modifiedLabels } from '../../../core/admission/builtin/node-labels.js'
import { nodeRestriction } from '../../../core/admission/builtin/node-restriction.js'
import { leases } from '../../../core/resources/groups/coordination.js'
import { resourceSlices } from '../../../core/resources/groups/resource.js'
import { csiNodes } from '../../../core/resources/groups/storage.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { attributes, forbiddenMessage } from './admission-fixture.js'

const kubelet = { username: 'system:node:n1', groups: ['system:nodes'] }
const plugin = nodeRestriction({ pod: async () => undefined, node: async () => undefined })

describe('NodeRestriction labels', () => {
  const table: [string, boolean][] = [
    ['kubernetes.io/hostname', true],
    ['topology.kubernetes.io/zone', true],
    ['node.kubernetes.io/anything', true],
    ['x.kubelet.kubernetes.io/anything', true],
    ['kubernetes.io/role', false],
    ['node-role.kubernetes.io/master', false],
    ['node-restriction.kubernetes.io/pool', false],
  ]
  for (const [key, allowed] of table)
    it(`${allowed ? 'lets' : 'keeps'} a kubelet ${allowed ? 'set' : 'from setting'} ${key}`, () => {
      assert.deepEqual(forbiddenNodeLabels([key]), allowed ? [] : [key])
    })

  it('lets a kubelet set labels outside the kubernetes domains, and sorts what it refuses', () => {
    assert.equal(isKubeletLabel('team'), false)
    assert.deepEqual(forbiddenNodeLabels(modifiedLabels({ team: 'a', 'z.k8s.io/x': '1', 'a.k8s.io/y': '2' }, { team: 'b' })), ['a.k8s.io/y', 'z.k8s.io/x'])
  })
})

describe('NodeRestriction objects', () => {
  const named = (name: string, spec: Record<string, unknown> = {}) => ({ metadata: { name }, spec }) as KubeObject
  it('keeps CSINodes and ResourceSlices to the node itself', async () => {
    const csi = attributes(csiNodes, { object: named('n2'), user: kubelet })
    assert.equal(await forbiddenMessage(() => plugin.admit(csi)), 'csinodes.storage.k8s.io "n2" is forbidden: can only access CSINode with the same name as the requesting node')
    await plugin.admit(attributes(csiNodes, { object: named('n1'), user: kubelet }))
    const slice = attributes(resourceSlices, { object: named('s', { nodeName: 'n2' }), user: kubelet })
    assert.equal(
      await forbiddenMessage(() => plugin.admit(slice)),
      'resourceslices.resource.k8s.io "s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node',
    )
    const remove = attributes(resourceSlices, { operation: 'DELETE', name: 's', oldObject: named('s', { nodeName: 'n2' }), user: kubelet })
    assert.equal(
      await forbiddenMessage(() => plugin.validate(remove)),
      'resourceslices.resource.k8s.io "s" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node',
    )
  })

  it('refuses a node user it cannot name, and ignores everyone else', async () => {
    const nameless = attributes(leases, { object: named('x'), user: { username: 'system:node:', groups: ['system:nodes'] } })
    assert.equal(await forbiddenMessage(() => plugin.admit(nameless)), 'leases.coordination.k8s.io "x" is forbidden: could not determine node from user "system:node:"')
    await plugin.admit(attributes(leases, { object: named('x'), user: { username: 'system:node:n1', groups: [] } }))
  })
})
