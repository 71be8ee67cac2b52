/**
 * storage.k8s.io/v1 validation against upstream's (pkg/apis/storage/validation):
 * StorageClasses, VolumeAttachments, CSINodes and CSIDrivers that break a
 * rule are refused with upstream's messages and field paths and nothing is
 * stored; valid ones are stored with storage/v1's defaults; the fields
 * upstream fixes at creation stay fixed on update.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const STORAGE = '/apis/storage.k8s.io/v1'
const CLASSES = `${STORAGE}/storageclasses`
const ATTACHMENTS = `${STORAGE}/volumeattachments`
const CSI_NODES = `${STORAGE}/csinodes`
const CSI_DRIVERS = `${STORAGE}/csidrivers`

const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const ONE_SOURCE = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'

const causes = (body: { details?: { causes?: { field: string; message: string }[] } }) => (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`)

/** An object to create: its name, and whatever else the test sends. */
type Named = { metadata: { name: string } } & Record<string, unknown>

let api: TestClient
before(async () => {
  api = await startServer()
})
after(() => api.server.shutdown())

/** Creates `body` in `collection`, expects a 422 with `message`, and that nothing was stored; returns the reply. */
async function refused(collection: string, body: Named, message: string) {
  const res = await api.post(collection, body)
  assert.equal(res.status, 422, res.text)
  assert.equal(res.body.reason, 'Invalid')
  assert.equal(res.body.message, message)
  assert.equal((await api.get(`${collection}/${body.metadata.name}`)).status, 404)
  return res
}

async function created(collection: string, body: Named) {
  const res = await api.post(collection, body)
  assert.equal(res.status, 201, res.text)
  return res.body
}

async function updateRefused(path: string, change: (current: any) => unknown, message: string) {
  const before = (await api.get(path)).body
  const res = await api.update(path, change)
  assert.equal(res.status, 422, res.text)
  assert.equal(res.body.message, message)
  assert.equal((await api.get(path)).body.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing stored')
  return res
}

describe('StorageClass', () => {
  const cls = (name: string, extra: Record<string, unknown> = {}) => ({ metadata: { name }, provisioner: 'csi.example.com', ...extra })
  const invalid = (name: string, detail: string) => `StorageClass.storage.k8s.io "${name}" is invalid: ${detail}`

  it('stores a valid class with the reclaim policy and binding mode defaulted', async () => {
    const body = await created(CLASSES, cls('sc-valid', { parameters: { type: 'ssd' }, allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['a', 'b'] }] }] }))
    assert.equal(body.reclaimPolicy, 'Delete')
    assert.equal(body.volumeBindingMode, 'Immediate')
  })

  it('requires a provisioner', async () => {
    await refused(CLASSES, { metadata: { name: 'sc-no-provisioner' } }, invalid('sc-no-provisioner', 'provisioner: Required value'))
    await refused(CLASSES, cls('sc-empty-provisioner', { provisioner: '' }), invalid('sc-empty-provisioner', 'provisioner: Required value'))
  })

  it('checks the provisioner lower-cased as a qualified name, and shows it lower-cased', async () => {
    await refused(CLASSES, cls('sc-bad-provisioner', { provisioner: 'Bad_Value!' }), invalid('sc-bad-provisioner', `provisioner: Invalid value: "bad_value!": ${NAME_PART}`))
    await created(CLASSES, cls('sc-upper-provisioner', { provisioner: 'Example.COM/Fast' }))
  })

  it('bounds the parameters and refuses an empty key', async () => {
    await refused(CLASSES, cls('sc-empty-key', { parameters: { '': 'x' } }), invalid('sc-empty-key', 'parameters: Invalid value: "": field can not be empty.'))
    const many = Object.fromEntries(Array.from({ length: 513 }, (_, i) => [`k${i}`, 'v']))
    await refused(CLASSES, cls('sc-many-parameters', { parameters: many }), invalid('sc-many-parameters', 'parameters: Too long: may not be more than 512 bytes'))
    const big = { a: 'x'.repeat(256 * 1024) }
    await refused(CLASSES, cls('sc-big-parameters', { parameters: big }), invalid('sc-big-parameters', 'parameters: Too long: may not be more than 262144 bytes'))
  })

  it('knows the reclaim policies and binding modes', async () => {
    await refused(
      CLASSES,
      cls('sc-bad-modes', { reclaimPolicy: 'Recycle', volumeBindingMode: 'Later' }),
      invalid('sc-bad-modes', '[reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain", volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"]'),
    )
    const retained = await created(CLASSES, cls('sc-retain', { reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' }))
    assert.equal(retained.reclaimPolicy, 'Retain')
  })

  it('checks allowed topologies: values, keys, and terms given twice', async () => {
    const term = (...expressions: unknown[]) => ({ matchLabelExpressions: expressions })
    await refused(
      CLASSES,
      cls('sc-topologies', {
        allowedTopologies: [
          term({ key: 'zone', values: [] }, { key: 'zone', values: ['a', 'a'] }),
          term({ key: 'bad key', values: ['a'] }),
          term({ key: 'bad key', values: ['a'] }),
        ],
      }),
      invalid(
        'sc-topologies',
        '[allowedTopologies[0].matchLabelExpressions[0].values: Required value, ' +
          'allowedTopologies[0].matchLabelExpressions[1].values[1]: Duplicate value: "a", ' +
          'allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone", ' +
          `allowedTopologies[1].matchLabelExpressions[0].key: Invalid value: "bad key": ${NAME_PART}, ` +
          `allowedTopologies[2].matchLabelExpressions[0].key: Invalid value: "bad key": ${NAME_PART}, ` +
          'allowedTopologies[2].matchLabelExpressions: Duplicate value: ""]',
      ),
    )
  })

  it('reports a term without expressions as upstream does: a duplicate once for each term given', async () => {
    const res = await refused(
      CLASSES,
      cls('sc-empty-term', { allowedTopologies: [{}, { matchLabelExpressions: [{ key: 'zone', values: ['a'] }] }] }),
      invalid('sc-empty-term', 'allowedTopologies[0].matchLabelExpressions: Duplicate value: ""'),
    )
    assert.deepEqual(causes(res.body), ['allowedTopologies[0].matchLabelExpressions: Duplicate value: ""', 'allowedTopologies[0].matchLabelExpressions: Duplicate value: ""'])
  })

  it('keeps provisioner, parameters, reclaim policy and binding mode as created', async () => {
    await created(CLASSES, cls('sc-fixed', { parameters: { type: 'ssd' } }))
    const path = `${CLASSES}/sc-fixed`
    await updateRefused(
      path,
      (sc) => ({ ...sc, provisioner: 'other.example.com', parameters: { type: 'hdd' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' }),
      invalid(
        'sc-fixed',
        '[parameters: Forbidden: updates to parameters are forbidden., provisioner: Forbidden: updates to provisioner are forbidden., ' +
          'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden., volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable]',
      ),
    )
    const labelled = await api.update(path, (sc) => ({ ...sc, metadata: { ...sc.metadata, labels: { tier: 'fast' } }, allowVolumeExpansion: true }))
    assert.equal(labelled.status, 200, labelled.text)
  })
})

describe('VolumeAttachment', () => {
  const attachment = (name: string, spec: Record<string, unknown> = {}) => ({
    metadata: { name },
    spec: { attacher: 'csi.example.com', nodeName: 'node1', source: { persistentVolumeName: 'pv1' }, ...spec },
  })
  const invalid = (name: string, detail: string) => `VolumeAttachment.storage.k8s.io "${name}" is invalid: ${detail}`

  it('stores a valid attachment, unattached whatever status the client sent', async () => {
    const body = await created(ATTACHMENTS, { ...attachment('va-valid'), status: { attached: true, attachmentMetadata: { a: 'b' } } })
    assert.deepEqual(body.status, { attached: false })
    await created(ATTACHMENTS, attachment('va-upper-attacher', { attacher: 'CSI.Example.com' }))
  })

  it('requires an attacher, one source and a node name', async () => {
    const res = await refused(
      ATTACHMENTS,
      { metadata: { name: 'va-empty' }, spec: {} },
      invalid('va-empty', `[spec.attacher: Required value, spec.source: Required value: ${ONE_SOURCE}, spec.nodeName: Invalid value: "": ${SUBDOMAIN}, spec.attacher: Invalid value: "": ${SUBDOMAIN}]`),
    )
    // The attacher's Required comes from both of upstream's checks: twice among the causes, once in the message.
    assert.equal(causes(res.body).filter((c) => c === 'spec.attacher: Required value').length, 2)
  })

  it('takes exactly one source, and a persistent volume by a valid name', async () => {
    await refused(ATTACHMENTS, attachment('va-two-sources', { source: { persistentVolumeName: 'pv1', inlineVolumeSpec: {} } }), invalid('va-two-sources', `spec.source: Forbidden: ${ONE_SOURCE}`))
    await refused(
      ATTACHMENTS,
      attachment('va-empty-pv', { source: { persistentVolumeName: '' } }),
      invalid('va-empty-pv', `[spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName, spec.source.persistentVolumeName: Invalid value: "": ${SUBDOMAIN}]`),
    )
    await refused(ATTACHMENTS, attachment('va-bad-pv', { source: { persistentVolumeName: 'Bad_Value!' } }), invalid('va-bad-pv', `spec.source.persistentVolumeName: Invalid value: "Bad_Value!": ${SUBDOMAIN}`))
  })

  it('names the attacher as a CSI driver and the node as a node', async () => {
    await refused(ATTACHMENTS, attachment('va-bad-attacher', { attacher: 'Bad_Value!' }), invalid('va-bad-attacher', `spec.attacher: Invalid value: "Bad_Value!": ${SUBDOMAIN}`))
    await refused(ATTACHMENTS, attachment('va-long-attacher', { attacher: 'a'.repeat(64) }), invalid('va-long-attacher', 'spec.attacher: Too long: may not be more than 63 bytes'))
    await refused(ATTACHMENTS, attachment('va-bad-node', { nodeName: 'Bad_Value!' }), invalid('va-bad-node', `spec.nodeName: Invalid value: "Bad_Value!": ${SUBDOMAIN}`))
  })

  it('keeps the spec as created', async () => {
    await created(ATTACHMENTS, attachment('va-fixed'))
    await updateRefused(
      `${ATTACHMENTS}/va-fixed`,
      (va) => ({ ...va, spec: { ...va.spec, nodeName: 'node2' } }),
      invalid(
        'va-fixed',
        'spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:"csi.example.com", Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(&"pv1"), InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:"node2"}: field is immutable',
      ),
    )
  })

  it('bounds the status an attacher writes', async () => {
    await created(ATTACHMENTS, attachment('va-status'))
    const path = `${ATTACHMENTS}/va-status/status`
    const long = await api.update(path, (va) => ({ ...va, status: { attached: false, attachError: { message: 'm'.repeat(1025) } } }))
    assert.equal(long.status, 422, long.text)
    // upstream shows the metadata limit for a message over its own 1024 bytes.
    assert.equal(long.body.message, invalid('va-status', 'status.attachError.message: Too long: may not be more than 262144 bytes'))
    assert.equal(causes(long.body).length, 2)
    const metadata = await api.update(path, (va) => ({ ...va, status: { attached: true, attachmentMetadata: { k: 'v'.repeat(256 * 1024) } } }))
    assert.equal(metadata.status, 422, metadata.text)
    assert.equal(metadata.body.message, invalid('va-status', 'status.attachmentMetadata: Too long: may not be more than 262144 bytes'))
    const ok = await api.update(path, (va) => ({ ...va, status: { attached: true, attachmentMetadata: { devicePath: '/dev/sdb' }, detachError: { message: 'busy' } } }))
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.status.attached, true)
  })
})

describe('CSINode', () => {
  const node = (name: string, drivers: unknown[]) => ({ metadata: { name }, spec: { drivers } })
  const invalid = (name: string, detail: string) => `CSINode.storage.k8s.io "${name}" is invalid: ${detail}`

  it('stores a node whose drivers are valid', async () => {
    await created(CSI_NODES, node('csinode-valid', [{ name: 'CSI.Example.com', nodeID: 'x'.repeat(256), topologyKeys: ['topology.kubernetes.io/zone'], allocatable: { count: 0 } }]))
  })

  it('lists each driver once, by a valid name, with a node ID', async () => {
    await refused(
      CSI_NODES,
      node('csinode-drivers', [
        { name: 'csi.example.com', nodeID: 'x'.repeat(257) },
        { name: 'csi.example.com', nodeID: '' },
        { name: 'Bad_Value!', nodeID: 'n' },
      ]),
      invalid(
        'csinode-drivers',
        `[spec.drivers[0].nodeID: Invalid value: "${'x'.repeat(257)}": must be 256 characters or less, spec.drivers[1].nodeID: Required value, ` +
          `spec.drivers[1].name: Duplicate value: "csi.example.com", spec.drivers[2].name: Invalid value: "Bad_Value!": ${SUBDOMAIN}]`,
      ),
    )
  })

  it('checks the volume count and the topology keys (at the driver’s path)', async () => {
    await refused(
      CSI_NODES,
      node('csinode-topology', [{ name: 'csi.example.com', nodeID: 'n', allocatable: { count: -1 }, topologyKeys: ['a', 'a', 'Bad Key'] }]),
      invalid(
        'csinode-topology',
        '[spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0, spec.drivers[0]: Duplicate value: "a", ' +
          `spec.drivers[0]: Invalid value: "Bad Key": ${NAME_PART}]`,
      ),
    )
  })

  it('keeps a registered driver as it is, while drivers come and go', async () => {
    const driver = { name: 'csi.example.com', nodeID: 'n1', topologyKeys: ['zone'] }
    await created(CSI_NODES, node('csinode-fixed', [driver]))
    const path = `${CSI_NODES}/csinode-fixed`
    await updateRefused(
      path,
      (n) => ({ ...n, spec: { drivers: [{ ...driver, nodeID: 'n2', allocatable: { count: 3 } }] } }),
      invalid('csinode-fixed', 'spec.drivers: Invalid value: storage.CSINodeDriver{Name:"csi.example.com", NodeID:"n2", TopologyKeys:[]string{"zone"}, Allocatable:(*storage.VolumeNodeResources)(&{...})}: field is immutable'),
    )
    const added = await api.update(path, (n) => ({ ...n, spec: { drivers: [driver, { name: 'other.example.com', nodeID: 'n1' }] } }))
    assert.equal(added.status, 200, added.text)
    const removed = await api.update(path, (n) => ({ ...n, spec: { drivers: [{ name: 'other.example.com', nodeID: 'n1' }] } }))
    assert.equal(removed.status, 200, removed.text)
  })

  it('checks the drivers on update too, each error twice among the causes as upstream repeats the check', async () => {
    await created(CSI_NODES, node('csinode-update', [{ name: 'csi.example.com', nodeID: 'n1' }]))
    const res = await updateRefused(
      `${CSI_NODES}/csinode-update`,
      (n) => ({ ...n, spec: { drivers: [...n.spec.drivers, { name: 'other.example.com', nodeID: '' }] } }),
      invalid('csinode-update', 'spec.drivers[1].nodeID: Required value'),
    )
    assert.deepEqual(causes(res.body), ['spec.drivers[1].nodeID: Required value', 'spec.drivers[1].nodeID: Required value'])
  })
})

describe('CSIDriver', () => {
  const driver = (name: string, spec: Record<string, unknown> = {}) => ({ metadata: { name }, spec })
  const invalid = (name: string, detail: string) => `CSIDriver.storage.k8s.io "${name}" is invalid: ${detail}`

  it('stores a driver with storage/v1’s defaults', async () => {
    const body = await created(CSI_DRIVERS, driver('defaults.example.com'))
    assert.deepEqual(body.spec, {
      attachRequired: true,
      podInfoOnMount: false,
      volumeLifecycleModes: ['Persistent'],
      storageCapacity: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType',
      requiresRepublish: false,
      seLinuxMount: false,
    })
  })

  it('names a driver as any DNS subdomain, longer than 63 characters too', async () => {
    const name = `${'a'.repeat(60)}.${'b'.repeat(60)}.example.com`
    await created(CSI_DRIVERS, driver(name))
  })

  it('knows the fsGroup policies and lifecycle modes, and bounds token requests', async () => {
    await refused(
      CSI_DRIVERS,
      driver('bad.example.com', {
        fsGroupPolicy: 'Bogus',
        volumeLifecycleModes: ['Persistent', 'Weird'],
        tokenRequests: [{ audience: 'a', expirationSeconds: 5 }, { audience: 'a' }, { audience: 'b', expirationSeconds: 5_000_000_000 }],
      }),
      invalid(
        'bad.example.com',
        '[spec.fsGroupPolicy: Unsupported value: "Bogus": supported values: "File", "None", "ReadWriteOnceWithFSType", ' +
          'spec.tokenRequests[0].expirationSeconds: Invalid value: 5: may not specify a duration less than 10 minutes, ' +
          'spec.tokenRequests[1].audience: Duplicate value: "a", ' +
          'spec.tokenRequests[2].expirationSeconds: Invalid value: 5000000000: may not specify a duration larger than 2^32 seconds, ' +
          'spec.volumeLifecycleModes: Unsupported value: "Weird": supported values: "Persistent", "Ephemeral"]',
      ),
    )
  })

  it('keeps attachRequired and the lifecycle modes as created, and lets the rest change', async () => {
    await created(CSI_DRIVERS, driver('fixed.example.com'))
    const path = `${CSI_DRIVERS}/fixed.example.com`
    await updateRefused(
      path,
      (d) => ({ ...d, spec: { ...d.spec, attachRequired: false, volumeLifecycleModes: ['Persistent', 'Ephemeral'] } }),
      invalid(
        'fixed.example.com',
        '[spec.attachedRequired: Invalid value: false: field is immutable, spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Persistent", "Ephemeral"}: field is immutable]',
      ),
    )
    const changed = await api.update(path, (d) => ({ ...d, spec: { ...d.spec, podInfoOnMount: true, fsGroupPolicy: 'File', tokenRequests: [{ audience: 'vault' }] } }))
    assert.equal(changed.status, 200, changed.text)
    assert.equal(changed.body.spec.podInfoOnMount, true)
  })
})
