import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeMessageOf, decodeProtobuf, encodeMessageOf, encodeProtobuf, encodeProtobufInSteps } from '../../../core/encoding/protobuf.js'
import { builtinEntries } from '../../../core/resources/builtin.js'
import { Catalogue } from '../../../core/resources/catalogue.js'
import { SAMPLES, apiVersionOf } from '../../integration/catalogue-samples.js'
import { parseDurationNanos } from '../../../core/encoding/protobuf/scalars.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { deepFreeze } from '../../../core/storage/objects.js'
import { formatGoDuration } from '../../../core/machinery/duration.js'
import type { TypeDef, TypeTable } from '../../../core/resources/schema/model.js'
import { type CapturedBody, kubectlBodies } from './protobuf-fixtures.js'
import { runCounting } from '../../fixtures/checkpoints.js'

function bytesOf(body: CapturedBody): Uint8Array {
  return Uint8Array.from(atob(body.base64), (c) => c.charCodeAt(0))
}

function assertBadRequest(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof StatusError, `expected a StatusError, got ${String(err)}`)
    assert.equal(err.code, 400)
    assert.equal(err.reason, 'BadRequest')
    assert.match(err.message, message)
    return true
  })
}

describe('decodeProtobuf reads what kubectl sends', () => {
  it('decodes `create namespace team-a`', () => {
    assert.deepEqual(decodeProtobuf(bytesOf(kubectlBodies.createNamespace)), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a' },
      spec: {},
      status: {},
    })
  })

  it('decodes `create configmap cfg --from-literal=a=b` with its namespace and data', () => {
    assert.deepEqual(decodeProtobuf(bytesOf(kubectlBodies.createConfigMap)), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg', namespace: 'default' },
      data: { a: 'b' },
    })
  })

  it('decodes `create secret generic s1 --from-literal=k=v` with base64 data', () => {
    const secret = decodeProtobuf(bytesOf(kubectlBodies.createSecret))
    assert.deepEqual(secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { k: 'dg==' } })
    assert.equal(atob((secret['data'] as Record<string, string>)['k']!), 'v')
  })

  it('decodes `create serviceaccount builder`', () => {
    assert.deepEqual(decodeProtobuf(bytesOf(kubectlBodies.createServiceAccount)), {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder' },
    })
  })

  it('decodes the SelfSubjectAccessReview of `auth can-i create pods`', () => {
    const review = decodeProtobuf(bytesOf(kubectlBodies.authCanICreatePods))
    assert.equal(review['apiVersion'], 'authorization.k8s.io/v1')
    assert.equal(review['kind'], 'SelfSubjectAccessReview')
    assert.deepEqual(review['spec'], {
      resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' },
    })
  })

  it('decodes the SelfSubjectReview of `auth whoami`', () => {
    const review = decodeProtobuf(bytesOf(kubectlBodies.authWhoami))
    assert.equal(review['apiVersion'], 'authentication.k8s.io/v1')
    assert.equal(review['kind'], 'SelfSubjectReview')
    assert.deepEqual(review['metadata'], {})
  })

  it('reads back what it writes for every captured body', () => {
    for (const body of Object.values(kubectlBodies)) {
      const obj = decodeProtobuf(bytesOf(body))
      assert.deepEqual(decodeProtobuf(encodeProtobuf(obj)), obj, body.command)
    }
  })
})

describe('encodeProtobuf and decodeProtobuf round trip', () => {
  it('keeps every meta special type: Time, MicroTime-free meta, int64, maps, lists, bytes', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cfg',
        namespace: 'default',
        uid: '1b4e28ba-2fa1-11d2-883f-0016cb7de2a4',
        resourceVersion: '42',
        generation: 3,
        creationTimestamp: '2024-01-02T03:04:05Z',
        deletionTimestamp: '1969-12-31T23:59:59Z',
        deletionGracePeriodSeconds: 30,
        labels: { app: 'web', tier: 'front' },
        annotations: { note: 'ünïcode ✓' },
        finalizers: ['a/b', 'c/d'],
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true, blockOwnerDeletion: false },
        ],
        managedFields: [
          {
            manager: 'kubectl',
            operation: 'Apply',
            apiVersion: 'v1',
            time: '2024-05-06T07:08:09Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { 'f:a': {} } },
          },
        ],
      },
      data: { a: 'b', empty: '' },
      binaryData: { bin: btoa(String.fromCharCode(0, 1, 2, 255)) },
      immutable: false,
    }
    assert.deepEqual(decodeProtobuf(encodeProtobuf(cm)), cm)
  })

  it('keeps negative int64 and int32 values and MicroTime microseconds', () => {
    const status = {
      apiVersion: 'v1',
      kind: 'Status',
      metadata: { resourceVersion: '7', continue: 'tok', remainingItemCount: -5 },
      status: 'Failure',
      message: 'gone',
      reason: 'Expired',
      code: 410,
      details: { name: 'x', kind: 'pods', retryAfterSeconds: -1, causes: [{ reason: 'FieldValueInvalid', field: 'spec' }] },
    }
    assert.deepEqual(decodeProtobuf(encodeProtobuf(status)), status)
  })

  it('encodes lists with their items', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'SecretList',
      metadata: { resourceVersion: '9' },
      items: [
        { metadata: { name: 'a' }, type: 'Opaque', data: { k: 'dg==' } },
        { metadata: { name: 'b' }, stringData: { x: 'y' } },
      ],
    }
    assert.deepEqual(decodeProtobuf(encodeProtobuf(list)), list)
  })

  it('writes a frozen item as it wrote it before, whatever list it is in, short or long', () => {
    const item = (name: string, size: number) => ({ metadata: { name, resourceVersion: '7' }, data: { k: 'x'.repeat(size) } })
    const plain = [item('short', 3), item('long', 300), item('longer', 20_000)]
    const frozen = plain.map((i) => deepFreeze(structuredClone(i)))
    const list = (items: unknown[], rv: string) => ({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: rv }, items })
    // The first encode keeps each frozen item's message, the second writes the kept bytes: both as the plain items' encoding.
    for (const rv of ['8', '9']) assert.deepEqual(encodeProtobuf(list(frozen, rv)), encodeProtobuf(list(plain, rv)))
    assert.deepEqual(encodeProtobuf(list([frozen[2], frozen[0]], '10')), encodeProtobuf(list([plain[2], plain[0]], '10')))
    assert.deepEqual(decodeProtobuf(encodeProtobuf(list(frozen, '11'))), list(plain, '11'))
  })

  it('keeps map-of-list values (SubjectAccessReview extra) and booleans set to false', () => {
    const sar = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: { name: 'r' },
      spec: {
        user: 'alice',
        groups: ['dev', 'ops'],
        extra: { scopes: ['a', 'b'], none: [] },
        nonResourceAttributes: { path: '/healthz', verb: 'get' },
      },
      status: { allowed: false, denied: true },
    }
    assert.deepEqual(decodeProtobuf(encodeProtobuf(sar)), sar)
  })

  it('keeps TokenRequest spec numbers and expiration Time', () => {
    const tr = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: { name: 'builder', namespace: 'default' },
      spec: { audiences: ['api'], expirationSeconds: 3600, boundObjectRef: { kind: 'Pod', name: 'p', uid: 'u' } },
      status: { token: 'abc', expirationTimestamp: '2030-01-01T00:00:00Z' },
    }
    assert.deepEqual(decodeProtobuf(encodeProtobuf(tr)), tr)
  })

  it('writes the k8s envelope with the type metadata', () => {
    const bytes = encodeProtobuf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } })
    assert.deepEqual([...bytes.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00])
    const text = new TextDecoder().decode(bytes)
    assert.ok(text.includes('Namespace'))
  })

  it('writes each length in as few bytes as its varint takes, on either side of one, two and three bytes, and any UTF-8', () => {
    // 24 and 25 on either side of where the writer hands a string to the UTF-8 encoder whole.
    for (const length of [0, 1, 24, 25, 48, 126, 127, 128, 129, 16_383, 16_384, 2_097_151, 2_097_152]) {
      for (const text of ['x'.repeat(length), 'é'.repeat(length >> 1), `${'a'.repeat(length)}😀\ud800`]) {
        const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'n', annotations: { a: text } }, data: { [text.slice(0, 300) || 'k']: text } }
        const bytes = encodeProtobuf(cm)
        const decoded = decodeProtobuf(bytes)
        // A lone surrogate is not UTF-8: it travels as U+FFFD, as Go's encoding of such a string does.
        const expected = JSON.parse(JSON.stringify(cm).replaceAll('\\ud800', '\ufffd'))
        assert.deepEqual(decoded, expected)
        // The ConfigMap's own message, field 2 after the magic and the 17 bytes of type meta: its length is a
        // minimal varint (a longer one would end in a zero byte) and covers the bytes up to fields 3 and 4.
        assert.equal(bytes[21], 0x12)
        let declared = 0
        let at = 22
        for (let shift = 1; ; shift *= 0x80) {
          const b = bytes[at++]!
          declared += (b & 0x7f) * shift
          if (b < 0x80) {
            assert.ok(at === 23 || b !== 0, `the length of ${length} is not minimal`)
            break
          }
        }
        assert.equal(at + declared + 4, bytes.length)
      }
    }
    // The envelope of a small object, byte for byte: the type meta's length and the object's in one byte each.
    assert.deepEqual(
      [...encodeProtobuf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } })],
      [0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, ...new TextEncoder().encode('Namespace'), 0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0x6e, 0x1a, 0x00, 0x22, 0x00],
    )
  })

  it('refuses to encode kinds without a protobuf form with 406', () => {
    assert.throws(
      () => encodeProtobuf({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
      (err: unknown) => err instanceof StatusError && err.code === 406,
    )
    assert.throws(
      () => encodeProtobuf({ apiVersion: 'meta.k8s.io/v1', kind: 'Table', rows: [], columnDefinitions: [] }),
      (err: unknown) => err instanceof StatusError && err.code === 406,
    )
  })
})

describe('special scalars through a hand-made type', () => {
  const inner: TypeDef = { name: 'test.Inner', fields: [{ name: 'n', type: { scalar: 'int32' }, proto: 1 }] }
  const everything: TypeDef = {
    name: 'test.Everything',
    fields: [
      { name: 's', type: { scalar: 'string' }, proto: 1 },
      { name: 'b', type: { scalar: 'boolean' }, proto: 2 },
      { name: 'i32', type: { scalar: 'int32' }, proto: 3 },
      { name: 'i64', type: { scalar: 'int64' }, proto: 4 },
      { name: 'd', type: { scalar: 'double' }, proto: 5 },
      { name: 'raw', type: { scalar: 'bytes' }, proto: 6 },
      { name: 'time', type: { scalar: 'time' }, proto: 7 },
      { name: 'micro', type: { scalar: 'microtime' }, proto: 8 },
      { name: 'qty', type: { scalar: 'quantity' }, proto: 9 },
      { name: 'port', type: { scalar: 'int-or-string' }, proto: 10 },
      { name: 'portName', type: { scalar: 'int-or-string' }, proto: 11 },
      { name: 'timeout', type: { scalar: 'duration' }, proto: 12 },
      { name: 'json', type: { scalar: 'raw' }, proto: 13 },
      { name: 'nums', type: { array: { scalar: 'int64' } }, proto: 14 },
      { name: 'nested', type: { array: { array: { scalar: 'string' } } }, proto: 15 },
      { name: 'byName', type: { map: { ref: 'test.Inner' } }, proto: 16 },
      { name: 'jsonOnly', type: { scalar: 'string' } },
    ],
  }
  const types: TypeTable = { 'test.Inner': inner, 'test.Everything': everything }

  it('round-trips every scalar the model knows', () => {
    const obj = {
      s: 'héllo',
      b: true,
      i32: -7,
      i64: 2 ** 53 - 1,
      d: 0.25,
      raw: btoa('\u0000\u00ff'),
      time: '2024-01-02T03:04:05Z',
      micro: '2024-01-02T03:04:05.123456Z',
      qty: '500m',
      port: 8080,
      portName: 'http',
      timeout: '1m30s',
      json: { any: ['json', 1, null, true] },
      nums: [0, -1, 2 ** 40],
      nested: [['a', 'b'], []],
      byName: { x: { n: 1 }, y: { n: -2 } },
    }
    assert.deepEqual(decodeMessageOf(encodeMessageOf(obj, everything, types), everything, types), obj)
  })

  it('skips fields without a protobuf number and converts time offsets to UTC', () => {
    const bytes = encodeMessageOf({ jsonOnly: 'x', time: '2024-01-02T05:04:05+02:00' }, everything, types)
    assert.deepEqual(decodeMessageOf(bytes, everything, types), { time: '2024-01-02T03:04:05Z' })
  })

  it('accepts packed repeated numbers', () => {
    // field 14, wire type 2, three varints: 1, 2, 300
    const bytes = Uint8Array.of(0x72, 0x04, 0x01, 0x02, 0xac, 0x02)
    assert.deepEqual(decodeMessageOf(bytes, everything, types), { nums: [1, 2, 300] })
  })
})

describe('Go durations', () => {
  it('formats as time.Duration.String does', () => {
    assert.equal(formatGoDuration(0), '0s')
    assert.equal(formatGoDuration(3600e9), '1h0m0s')
    assert.equal(formatGoDuration(90.5e9), '1m30.5s')
    assert.equal(formatGoDuration(300e6), '300ms')
    assert.equal(formatGoDuration(1500), '1.5µs')
    assert.equal(formatGoDuration(-2e9), '-2s')
  })

  it('parses what time.ParseDuration accepts', () => {
    assert.equal(parseDurationNanos('1h30m'), 5400e9)
    assert.equal(parseDurationNanos('1.5s'), 1.5e9)
    assert.equal(parseDurationNanos('-300ms'), -300e6)
    assert.equal(parseDurationNanos('0'), 0)
    assert.throws(() => parseDurationNanos('5 minutes'))
    assert.throws(() => parseDurationNanos(''))
  })
})

describe('decodeProtobuf refuses malformed bodies with 400 BadRequest', () => {
  it('without the k8s magic prefix', () => {
    assertBadRequest(() => decodeProtobuf(new TextEncoder().encode('{"kind":"Namespace"}')), /k8s/)
    assertBadRequest(() => decodeProtobuf(new Uint8Array()), /k8s/)
  })

  it('with a truncated varint', () => {
    assertBadRequest(() => decodeProtobuf(Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x0a, 0x80)), /truncated varint/)
  })

  it('with a length that runs past the end', () => {
    const bytes = bytesOf(kubectlBodies.createConfigMap)
    assertBadRequest(() => decodeProtobuf(bytes.subarray(0, bytes.length - 5)), /past the end|truncated/)
  })

  it('with a kind that is not registered', () => {
    const bytes = encodeProtobuf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } })
    const text = new TextDecoder().decode(bytes).replace('Namespace', 'Namesbace')
    assertBadRequest(() => decodeProtobuf(new TextEncoder().encode(text)), /no kind "Namesbace" is registered/)
  })

  it('with a short string that is not UTF-8, and reads a short one that is', () => {
    const name = (bytes: number[]) => {
      const meta = [0x0a, bytes.length, ...bytes]
      const typeMeta = [0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, ...new TextEncoder().encode('Namespace')]
      const raw = [0x0a, meta.length, ...meta]
      return Uint8Array.from([0x6b, 0x38, 0x73, 0x00, 0x0a, typeMeta.length, ...typeMeta, 0x12, raw.length, ...raw])
    }
    assertBadRequest(() => decodeProtobuf(name([0x61, 0xff, 0x62])), /UTF-8/)
    assert.deepEqual(decodeProtobuf(name([...new TextEncoder().encode('née')])).metadata, { name: 'née' })
    assert.deepEqual(decodeProtobuf(name([...new TextEncoder().encode('plain')])).metadata, { name: 'plain' })
  })

  it('with a field of the wrong wire type', () => {
    // ConfigMap field 4 (immutable, a bool) sent as a length-delimited field.
    const typeMeta = [0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, ...new TextEncoder().encode('ConfigMap')]
    const raw = [0x22, 0x01, 0x00]
    const body = [0x6b, 0x38, 0x73, 0x00, 0x0a, typeMeta.length, ...typeMeta, 0x12, raw.length, ...raw]
    assertBadRequest(() => decodeProtobuf(Uint8Array.from(body)), /wire type/)
  })
})

describe('decodeProtobuf reads zeros as Go does', () => {
  // Upstream's generated code writes every plain field, set or not; a pointer field only when set.
  it('drops a plain omitempty field at its zero, keeps a pointer field set to zero', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', generation: 0 },
      spec: {
        hostNetwork: false,
        automountServiceAccountToken: false,
        containers: [{ name: 'c', image: 'busybox', stdin: false, tty: false, ports: [{ containerPort: 80, hostPort: 0, protocol: 'TCP' }] }],
      },
    }
    assert.deepEqual(decodeProtobuf(encodeProtobuf(pod)), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 80, protocol: 'TCP' }] }] },
    })
  })

  it('keeps an empty string in a pointer field, where it means something', () => {
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'd' }, spec: { storageClassName: '', volumeName: '' } }
    assert.deepEqual((decodeProtobuf(encodeProtobuf(claim)) as { spec: unknown }).spec, { storageClassName: '' }, 'no class asked for, and no volume named')
  })

  it("drops a CRD schema's false booleans and keeps its zero bounds", () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'ts.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'ts', kind: 'T' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', nullable: false, uniqueItems: false, minimum: 0 } } }],
      },
    }
    const decoded = decodeProtobuf(encodeProtobuf(crd)) as { spec: { versions: { schema: unknown }[] } }
    assert.deepEqual(decoded.spec.versions[0]!.schema, { openAPIV3Schema: { type: 'object', minimum: 0 } })
  })
})

describe('encodeProtobufInSteps, for objects of megabytes', () => {
  const catalogue = new Catalogue(builtinEntries(async () => ({ allowed: false })))
  const stepped = (obj: Record<string, unknown>): { bytes: Uint8Array; checkpoints: number } => {
    const { value: bytes, checkpoints } = runCounting(encodeProtobufInSteps(obj))
    return { bytes, checkpoints }
  }

  it("writes the bytes encodeProtobuf writes, for every kind's sample", () => {
    let compared = 0
    for (const sample of SAMPLES) {
      const [group = '', version = '', resource = ''] = sample.gvr.split('/')
      const entry = catalogue.lookup(group, version, resource)
      assert.ok(entry, sample.gvr)
      const body = { apiVersion: apiVersionOf(sample.gvr), kind: entry.kind, ...sample.body } as Record<string, unknown>
      let atOnce: Uint8Array
      try {
        atOnce = encodeProtobuf(body)
      } catch (err) {
        // A kind without a protobuf form is refused the same way.
        assert.throws(() => stepped(body), (e: unknown) => e instanceof StatusError && e.code === (err as StatusError).code)
        continue
      }
      assert.deepEqual(stepped(body).bytes, atOnce, sample.gvr)
      compared++
    }
    assert.ok(compared > 40, `${compared} kinds compared`)
  })

  it('writes a map of many keys, raw FieldsV1 and a list of many items in runs, the same bytes', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${(i * 7919) % 20_000}\u00e9`)
    const fieldsV1 = { 'f:data': Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) }
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', managedFields: [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1 }] },
      data: Object.fromEntries(keys.map((k) => [k, 'v'])),
    }
    const wide = stepped(configMap)
    assert.deepEqual(wide.bytes, encodeProtobuf(configMap))
    assert.ok(wide.checkpoints >= 15, `${wide.checkpoints} checkpoints`)
    const env = Array.from({ length: 10_000 }, (_, i) => ({ name: `E${i}`, value: String(i) }))
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i', env }] } }
    const listed = stepped(pod)
    assert.deepEqual(listed.bytes, encodeProtobuf(pod))
    assert.ok(listed.checkpoints >= 4, `${listed.checkpoints} checkpoints`)
  })
})
