/**
 * Endpoints, PersistentVolumes, PersistentVolumeClaims and LimitRanges are
 * validated as upstream validates them: each invalid object gets 422 with
 * upstream's message and is not stored; valid ones pass; updates keep what
 * upstream keeps fixed.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const NS = '/api/v1/namespaces/default'
const EP = `${NS}/endpoints`
const PV = '/api/v1/persistentvolumes'
const PVC = `${NS}/persistentvolumeclaims`
const LR = `${NS}/limitranges`

const DNS_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const DNS_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const QUALIFIED_NAME =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'

let api: TestClient

before(async () => {
  // No admission plugins: what is checked here is validation alone.
  api = await startServer({ admission: { plugins: [] } })
})

/** Posts `body` to `collection`, expects 422 with `message` (`Kind "name" is invalid: ` + the errors), and nothing stored. */
async function refused(collection: string, body: { metadata: { name: string } }, kind: string, errors: string | string[]): Promise<void> {
  const res = await api.post(collection, body)
  const list = Array.isArray(errors) ? errors : [errors]
  const detail = list.length === 1 ? list[0] : `[${list.join(', ')}]`
  assert.equal(res.status, 422, res.text)
  assert.equal(res.body.message, `${kind} "${body.metadata.name}" is invalid: ${detail}`)
  assert.equal((await api.get(`${collection}/${body.metadata.name}`)).status, 404)
}

async function created(collection: string, body: { metadata: { name: string } }): Promise<any> {
  const res = await api.post(collection, body)
  assert.equal(res.status, 201, res.text)
  return res.body
}

describe('Endpoints', () => {
  const ep = (name: string, subsets: unknown[]) => ({ metadata: { name }, subsets })
  const refuse = (name: string, subsets: unknown[], errors: string | string[]) => refused(EP, ep(name, subsets), 'Endpoints', errors)

  it('needs an address in every subset', async () => {
    await refuse('no-address', [{ ports: [{ port: 80 }] }], 'subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`')
    await created(EP, ep('not-ready-only', [{ notReadyAddresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }]))
  })

  it('needs each address to be an IP that names a peer', async () => {
    await refuse('empty-ip', [{ addresses: [{ ip: '' }] }], [
      `subsets[0].addresses[0].ip: Invalid value: "": ${IP}`,
      'subsets[0].addresses[0].ip: Invalid value: "": must be a valid IP address',
    ])
    await refuse(
      'special-ips',
      [{ addresses: [{ ip: '0.0.0.0' }, { ip: '169.254.0.9' }, { ip: '224.0.0.1' }, { ip: 'fe80::1' }, { ip: '::' }] }],
      [
        'subsets[0].addresses[0].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
        'subsets[0].addresses[1].ip: Invalid value: "169.254.0.9": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
        'subsets[0].addresses[2].ip: Invalid value: "224.0.0.1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
        'subsets[0].addresses[3].ip: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
        'subsets[0].addresses[4].ip: Invalid value: "::": may not be unspecified (::)',
      ],
    )
    await refuse('bad-names', [{ notReadyAddresses: [{ ip: '10.0.0.1', hostname: 'Bad_Host', nodeName: 'Bad_Node' }] }], [
      `subsets[0].notReadyAddresses[0].hostname: Invalid value: "Bad_Host": ${DNS_LABEL}`,
      `subsets[0].notReadyAddresses[0].nodeName: Invalid value: "Bad_Node": ${DNS_SUBDOMAIN}`,
    ])
  })

  it('reads IPv4 octets with leading zeros, as upstream’s sloppy parser does, and keeps loopback for local servers', async () => {
    await created(EP, ep('leading-zeros', [{ addresses: [{ ip: '010.000.000.001' }] }]))
    await created(EP, ep('loopback', [{ addresses: [{ ip: '127.0.0.1' }, { ip: '::1' }] }]))
  })

  it('needs names on ports once there are several, numbers in range and a known protocol', async () => {
    await refuse(
      'ports',
      [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }, { name: 'Bad_Name', port: 70000, protocol: 'ICMP', appProtocol: 'bad proto!' }] }],
      [
        'subsets[0].ports[0].name: Required value',
        `subsets[0].ports[1].name: Invalid value: "Bad_Name": ${DNS_LABEL}`,
        'subsets[0].ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
        'subsets[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
        `subsets[0].ports[1].appProtocol: Invalid value: "bad proto!": ${QUALIFIED_NAME}`,
      ],
    )
    const ok = await created(EP, ep('two-ports', [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81, protocol: 'UDP' }] }]))
    assert.deepEqual(ok.subsets[0].ports, [
      { name: 'a', port: 80, protocol: 'TCP' },
      { name: 'b', port: 81, protocol: 'UDP' },
    ])
  })

  it('checks an update as a create, and keeps what was stored when it fails', async () => {
    const stored = await created(EP, ep('updated', [{ addresses: [{ ip: '10.0.0.1' }] }]))
    const res = await api.put(`${EP}/updated`, { ...stored, subsets: [{ addresses: [] }] })
    assert.equal(res.status, 422)
    assert.equal(res.body.message, 'Endpoints "updated" is invalid: subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`')
    assert.deepEqual((await api.get(`${EP}/updated`)).body.subsets, stored.subsets)
  })
})

describe('PersistentVolumes', () => {
  const pv = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    metadata: { name, ...extra },
    spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, ...spec },
  })
  const refuse = (name: string, spec: Record<string, unknown>, errors: string | string[], extra: Record<string, unknown> = {}) =>
    refused(PV, pv(name, spec, extra), 'PersistentVolume', errors)

  it('needs access modes, a storage capacity and a volume source', async () => {
    await refused(PV, { metadata: { name: 'empty' }, spec: {} } as never, 'PersistentVolume', [
      'spec.accessModes: Required value',
      'spec.capacity: Required value',
      'spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"',
      'spec: Required value: must specify a volume type',
    ])
    await refuse('cpu-too', { capacity: { storage: '1Gi', cpu: '1' }, hostPath: { path: '/x' } }, [
      'spec.capacity: Unsupported value: core.ResourceList{"cpu":resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1", Format:"DecimalSI"}, "storage":resource.Quantity{i:resource.int64Amount{value:1073741824, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1Gi", Format:"BinarySI"}}: supported values: "storage"',
    ])
    await refuse('no-storage', { capacity: {}, hostPath: { path: '/x' } }, [
      'spec.capacity: Required value',
      'spec.capacity: Unsupported value: core.ResourceList{}: supported values: "storage"',
    ])
    await refuse('negative', { capacity: { storage: '-1Gi' }, hostPath: { path: '/x' } }, [
      'spec.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity',
      'spec.capacity[storage]: Invalid value: "-1Gi": must be greater than zero',
    ])
    await refuse('zero', { capacity: { storage: '0' }, hostPath: { path: '/x' } }, 'spec.capacity[storage]: Invalid value: "0": must be greater than zero')
  })

  it('knows the access modes, and keeps ReadWriteOncePod alone', async () => {
    await refuse('modes', { accessModes: ['Foo', 'ReadWriteOncePod', 'ReadOnlyMany'], hostPath: { path: '/x' } }, [
      'spec.accessModes: Unsupported value: "Foo": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      'spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
    ])
  })

  it('takes one source, checked by its own rules', async () => {
    await refuse('two', { hostPath: { path: '/x' }, nfs: { server: 's', path: '/p' }, local: { path: '/l' } }, [
      'spec.nfs: Forbidden: may not specify more than 1 volume type',
      'spec.local: Forbidden: may not specify more than 1 volume type',
    ])
    await refuse('host-path', { hostPath: { path: '' } }, 'spec.hostPath.path: Required value')
    await refuse('backsteps', { hostPath: { path: '/a/../b', type: 'Weird' } }, [
      'spec.hostPath.path: Invalid value: "/a/../b": must not contain \'..\'',
      'spec.hostPath.type: Unsupported value: "Weird": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
    ])
    await refuse('nfs', { nfs: { server: '', path: 'relative' } }, [
      'spec.nfs.server: Required value',
      'spec.nfs.path: Invalid value: "relative": must be an absolute path',
    ])
    await refuse('csi', { csi: { driver: '', volumeHandle: '', nodePublishSecretRef: { name: '', namespace: 'Bad_NS' } } }, [
      'spec.csi.driver: Required value',
      `spec.csi.driver: Invalid value: "": ${DNS_SUBDOMAIN}`,
      'spec.csi.volumeHandle: Required value',
      'spec.csi.nodePublishSecretRef.name: Required value',
      `spec.csi.nodePublishSecretRef.namespace: Invalid value: "Bad_NS": ${DNS_LABEL}`,
    ])
    await refuse('iscsi', { iscsi: { targetPortal: '', iqn: 'foo', lun: 300, chapAuthSession: true } }, [
      'spec.iscsi.targetPortal: Required value',
      'spec.iscsi.iqn: Invalid value: "foo": must be valid format',
      'spec.iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive',
      'spec.iscsi.secretRef: Required value',
    ])
    await refuse('gce', { gcePersistentDisk: { pdName: '', partition: 300 } }, [
      'spec.persistentDisk.pdName: Required value',
      'spec.persistentDisk.partition: Invalid value: 300: must be between 1 and 255, inclusive',
    ])
    await refuse('azure', { azureDisk: { diskName: 'd', diskURI: 'x' } }, [
      'spec.azureDisk.diskURI: Unsupported value: "x": supported values: "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"',
    ])
  })

  it('needs node affinity for a local volume, with valid node selector terms', async () => {
    await refuse('local', { local: { path: '/mnt/a' } }, 'spec.nodeAffinity: Required value: Local volume requires node affinity')
    await refuse('no-terms', { local: { path: '/m' }, nodeAffinity: { required: { nodeSelectorTerms: [] } } }, [
      'spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term',
    ])
    await refuse(
      'bad-terms',
      {
        local: { path: '/m' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['1', '2'] }],
                matchFields: [{ key: 'other', operator: 'In', values: ['a'] }],
              },
            ],
          },
        },
      },
      [
        "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        'spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "other": not a valid field selector key',
      ],
    )
  })

  it('checks the reclaim policy, class, volume mode and mount options', async () => {
    await refuse('root-recycle', { hostPath: { path: '/' }, persistentVolumeReclaimPolicy: 'Recycle' }, [
      "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
    ])
    await refuse('fields', { hostPath: { path: '/x' }, persistentVolumeReclaimPolicy: 'Keep', storageClassName: 'Bad_Class', volumeMode: 'Raw' }, [
      'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
      `spec.storageClassName: Invalid value: "Bad_Class": ${DNS_SUBDOMAIN}`,
      'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ])
    await refuse(
      'mount-options',
      { hostPath: { path: '/x' } },
      'metadata.annotations.volume.beta.kubernetes.io/mount-options: Forbidden: may not specify mount options for this volume type',
      { annotations: { 'volume.beta.kubernetes.io/mount-options': 'ro' } },
    )
  })

  it('stores a valid volume with upstream’s defaults, Pending', async () => {
    const body = await created(PV, pv('good', { hostPath: { path: '/data' } }))
    assert.equal(body.spec.persistentVolumeReclaimPolicy, 'Retain')
    assert.equal(body.spec.volumeMode, 'Filesystem')
    assert.deepEqual(body.spec.hostPath, { path: '/data', type: '' })
    assert.deepEqual(body.status, { phase: 'Pending' })
  })

  it('keeps the source and volume mode of a volume, and its node affinity but for beta labels moving to GA', async () => {
    const zone = (key: string) => ({ required: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: ['z'] }] }] } })
    const stored = await created(PV, pv('fixed', { local: { path: '/a' }, nodeAffinity: zone('failure-domain.beta.kubernetes.io/zone') }))
    const changed = await api.put(`${PV}/fixed`, { ...stored, spec: { ...stored.spec, local: { path: '/b' }, volumeMode: 'Block' } })
    assert.equal(changed.status, 422)
    assert.equal(
      changed.body.message,
      'PersistentVolume "fixed" is invalid: [spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n' +
        '  - spec.local.path: "/a"\n  + spec.local.path: "/b", volumeMode: Invalid value: "Block": field is immutable]',
    )
    const ga = await api.put(`${PV}/fixed`, { ...stored, spec: { ...stored.spec, nodeAffinity: zone('topology.kubernetes.io/zone') } })
    assert.equal(ga.status, 200, ga.text)
    const other = await api.put(`${PV}/fixed`, { ...ga.body, spec: { ...ga.body.spec, nodeAffinity: zone('zone') } })
    assert.equal(other.status, 422)
    assert.equal(
      other.body.message,
      'PersistentVolume "fixed" is invalid: nodeAffinity: Invalid value: core.VolumeNodeAffinity{Required:(*core.NodeSelector)(&{...})}: field is immutable, except for updating from beta label to GA',
    )
    // Through status the spec is not checked again: only the status changes.
    const status = await api.put(`${PV}/fixed/status`, { ...ga.body, status: { phase: 'Available' } })
    assert.equal(status.status, 200, status.text)
    assert.equal(status.body.status.phase, 'Available')
  })
})

describe('PersistentVolumeClaims', () => {
  const claim = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
    metadata: { name, ...metadata },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  })
  const refuse = (name: string, spec: Record<string, unknown>, errors: string | string[]) =>
    refused(PVC, claim(name, spec), 'PersistentVolumeClaim', errors)

  it('needs access modes and a positive storage request', async () => {
    await refuse('no-modes', { accessModes: [] }, 'spec.accessModes: Required value: at least 1 access mode is required')
    await refuse('no-request', { resources: {} }, 'spec.resources[storage]: Required value')
    await refuse('zero', { accessModes: ['X', 'ReadWriteOncePod', 'ReadWriteOnce'], resources: { requests: { storage: '0' } } }, [
      'spec.accessModes: Unsupported value: "X": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      'spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
      'spec.resources[storage]: Invalid value: "0": must be greater than zero',
    ])
  })

  it('checks the selector, class, volume mode and data sources', async () => {
    await refuse('fields', { selector: { matchExpressions: [{ key: 'k', operator: 'Foo' }] }, storageClassName: 'Bad_Class', volumeMode: 'Raw' }, [
      'spec.selector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
      `spec.storageClassName: Invalid value: "Bad_Class": ${DNS_SUBDOMAIN}`,
      'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
    ])
    // The data source given fills dataSourceRef too, so both report it.
    await refuse('snapshot', { dataSource: { kind: 'Snap', name: '' } }, [
      'spec.dataSource.name: Required value',
      'spec.dataSource: Invalid value: "Snap": must be \'PersistentVolumeClaim\' when referencing the default apiGroup',
      'spec.dataSourceRef.name: Required value',
      'spec.dataSourceRef: Invalid value: "Snap": must be \'PersistentVolumeClaim\' when referencing the default apiGroup',
    ])
    const copy = await created(PVC, claim('copy', { dataSource: { kind: 'PersistentVolumeClaim', name: 'data' } }))
    // TypedObjectReference's apiGroup is a pointer without omitempty: Go writes it unset as null.
    assert.deepEqual(copy.spec.dataSourceRef, { apiGroup: null, kind: 'PersistentVolumeClaim', name: 'data' })
    assert.equal(copy.spec.volumeMode, 'Filesystem')
    assert.deepEqual(copy.status, { phase: 'Pending' })
  })

  it('keeps the spec of a claim, but for a volume name set once and a bound claim’s storage request', async () => {
    const stored = await created(PVC, claim('kept'))
    const modes = await api.put(`${PVC}/kept`, { ...stored, spec: { ...stored.spec, accessModes: ['ReadOnlyMany'] } })
    assert.equal(modes.status, 422)
    assert.equal(
      modes.body.message,
      'PersistentVolumeClaim "kept" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n' +
        '  - spec.accessModes[0]: "ReadWriteOnce"\n  + spec.accessModes[0]: "ReadOnlyMany"',
    )
    const grown = await api.put(`${PVC}/kept`, { ...stored, spec: { ...stored.spec, resources: { requests: { storage: '2Gi' } } } })
    assert.equal(grown.status, 422, 'an unbound claim keeps its request')
    const named = await api.put(`${PVC}/kept`, { ...stored, spec: { ...stored.spec, volumeName: 'pv-1' } })
    assert.equal(named.status, 200, named.text)
    const renamed = await api.put(`${PVC}/kept`, { ...named.body, spec: { ...named.body.spec, volumeName: 'pv-2' } })
    assert.equal(renamed.status, 422)
    const bound = await api.put(`${PVC}/kept/status`, { ...named.body, status: { phase: 'Bound', capacity: { storage: '1Gi' } } })
    assert.equal(bound.status, 200, bound.text)
    const bigger = await api.put(`${PVC}/kept`, { ...bound.body, spec: { ...bound.body.spec, resources: { requests: { storage: '2Gi' } } } })
    assert.equal(bigger.status, 200, bigger.text)
    const smaller = await api.put(`${PVC}/kept`, { ...bigger.body, spec: { ...bigger.body.spec, resources: { requests: { storage: '1Gi' } } } })
    assert.equal(smaller.status, 422)
    assert.equal(smaller.body.message, 'PersistentVolumeClaim "kept" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity')
    assert.equal((await api.get(`${PVC}/kept`)).body.spec.resources.requests.storage, '2Gi')
  })

  it('lets a class move from the beta annotation to the field, and keeps the annotation', async () => {
    const beta = 'volume.beta.kubernetes.io/storage-class'
    const stored = await created(PVC, claim('annotated', {}, { annotations: { [beta]: 'fast' } }))
    const moved = await api.put(`${PVC}/annotated`, { ...stored, spec: { ...stored.spec, storageClassName: 'fast' } })
    assert.equal(moved.status, 200, moved.text)
    const relabelled = await api.put(`${PVC}/annotated`, { ...moved.body, metadata: { ...moved.body.metadata, annotations: { [beta]: 'slow' } } })
    assert.equal(relabelled.status, 422)
    assert.equal(
      relabelled.body.message,
      'PersistentVolumeClaim "annotated" is invalid: metadata.annotations.volume.beta.kubernetes.io/storage-class: Invalid value: "slow": field is immutable',
    )
  })

  it('checks the resize bookkeeping written through status', async () => {
    const stored = await created(PVC, claim('resizing'))
    const res = await api.put(`${PVC}/resizing/status`, { ...stored, status: { phase: 'Bound', allocatedResourceStatuses: { storage: 'Stuck' } } })
    assert.equal(res.status, 422)
    assert.equal(
      res.body.message,
      'PersistentVolumeClaim "resizing" is invalid: status.allocatedResourceStatus: Unsupported value: storage: supported values: "ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress", "NodeResizeInfeasible", "NodeResizePending"',
    )
  })
})

describe('LimitRanges', () => {
  const lr = (name: string, limits: unknown[]) => ({ metadata: { name }, spec: { limits } })
  const refuse = (name: string, limits: unknown[], errors: string | string[]) => refused(LR, lr(name, limits), 'LimitRange', errors)
  const q = (value: number, scale: number, s: string, format: string) =>
    `resource.Quantity{i:resource.int64Amount{value:${value}, scale:${scale}}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"${s}", Format:"${format}"}`

  it('takes one item per type, of a known or qualified type', async () => {
    await refuse('twice', [{ type: 'Container', max: { cpu: '2' } }, { type: 'Container', max: { cpu: '2' } }], 'spec.limits[1].type: Duplicate value: "Container"')
    await refuse('empty-type', [{ type: '' }], [
      'spec.limits[0].type: Invalid value: "": name part must be non-empty',
      `spec.limits[0].type: Invalid value: "": ${QUALIFIED_NAME}`,
    ])
    await refuse('odd-type', [{ type: 'Foo' }], 'spec.limits[0].type: Invalid value: "Foo": must be a standard limit type or fully qualified')
    await created(LR, lr('custom-type', [{ type: 'example.com/thing', max: { 'example.com/widgets': '3' } }]))
  })

  it('takes resource names that fit the item type', async () => {
    await refuse('names', [{ type: 'Container', max: { storage: '1', foo: '1' } }], [
      'spec.limits[0].max[storage]: Invalid value: "storage": must be a standard resource for containers',
      'spec.limits[0].max[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
      'spec.limits[0].max[foo]: Invalid value: "foo": must be a standard resource for containers',
      'spec.limits[0].default[storage]: Invalid value: "storage": must be a standard resource for containers',
      'spec.limits[0].default[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
      'spec.limits[0].default[foo]: Invalid value: "foo": must be a standard resource for containers',
      'spec.limits[0].defaultRequest[storage]: Invalid value: "storage": must be a standard resource for containers',
      'spec.limits[0].defaultRequest[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
      'spec.limits[0].defaultRequest[foo]: Invalid value: "foo": must be a standard resource for containers',
    ])
    await refuse('pod-defaults', [{ type: 'Pod', default: { cpu: '1' }, defaultRequest: { cpu: '1' } }], [
      "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
      "spec.limits[0].defaultRequest: Forbidden: may not be specified when `type` is 'Pod'",
    ])
    await refuse(
      'claims',
      [{ type: 'PersistentVolumeClaim', max: { cpu: '1' } }],
      'spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
    )
  })

  it('keeps min <= default request <= default <= max, and the ratio within max/min', async () => {
    // max is the default limit and the default request, as the defaults fill them in.
    await refuse('min-over-max', [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }], [
      `spec.limits[0].min[cpu]: Invalid value: ${q(2, 0, '2', 'DecimalSI')}: min value 2 is greater than max value 1`,
      `spec.limits[0].defaultRequest[cpu]: Invalid value: ${q(1, 0, '1', 'DecimalSI')}: min value 2 is greater than default request value 1`,
      `spec.limits[0].default[cpu]: Invalid value: ${q(2, 0, '2', 'DecimalSI')}: min value 2 is greater than default value 1`,
    ])
    await refuse('ratio', [{ type: 'Container', min: { cpu: '100m' }, max: { cpu: '200m' }, maxLimitRequestRatio: { cpu: '3' } }], [
      `spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: ${q(3, 0, '3', 'DecimalSI')}: ratio 3 is greater than max/min = 2.000000`,
    ])
    await refuse('small-ratio', [{ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }], [
      `spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: ${q(500, -3, '500m', 'DecimalSI')}: ratio 500m is less than 1`,
    ])
    await refuse('gpu', [{ type: 'Container', default: { 'example.com/gpu': '2' }, defaultRequest: { 'example.com/gpu': '1' } }], [
      `spec.limits[0].defaultRequest[example.com/gpu]: Invalid value: ${q(1, 0, '1', 'DecimalSI')}: default value 2 must equal to defaultRequest value 1 in example.com/gpu`,
    ])
    await created(LR, lr('fits', [{ type: 'Container', min: { cpu: '100m' }, max: { cpu: '2' }, default: { cpu: '1' }, maxLimitRequestRatio: { cpu: '4' } }]))
  })

  it('names one sent without a name by a new UUID, as upstream\u2019s strategy does', async () => {
    const res = await api.post(LR, { spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] } })
    assert.equal(res.status, 201, res.text)
    assert.match(res.body.metadata.name, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    assert.equal((await api.get(`${LR}/${res.body.metadata.name}`)).status, 200)
  })

  it('checks an update as a create', async () => {
    const stored = await created(LR, lr('updated', [{ type: 'Container', max: { cpu: '1' } }]))
    const res = await api.put(`${LR}/updated`, { ...stored, spec: { limits: [...stored.spec.limits, { type: 'Container' }] } })
    assert.equal(res.status, 422)
    assert.equal(res.body.message, 'LimitRange "updated" is invalid: spec.limits[1].type: Duplicate value: "Container"')
    assert.equal((await api.get(`${LR}/updated`)).body.spec.limits.length, 1)
  })
})
