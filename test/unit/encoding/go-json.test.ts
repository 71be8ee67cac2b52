import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiObjectJson, statusJson, watchEventJson } from '../../../core/encoding/api-json.js'
import { canonicalCopy, isCanonical } from '../../../core/encoding/canonical.js'
import { compareGoStrings, indentGo, marshalGo, UNSTRUCTURED } from '../../../core/encoding/go-json.js'
import { shapeOfObject, shapeOfType } from '../../../core/encoding/json-shapes.js'

/** The JSON keys of a struct as written, in order (nested objects skipped). */
function topKeys(json: string, path: string[]): string[] {
  let v = JSON.parse(json) as Record<string, unknown>
  for (const p of path) v = (Array.isArray(v) ? v[Number(p)] : v[p]) as Record<string, unknown>
  return Object.keys(v)
}

describe("Go's encoding/json text", () => {
  it("escapes <, >, &, U+2028 and U+2029 as Go's HTML-safe encoder does", () => {
    assert.equal(marshalGo({ a: '<b>&\u2028\u2029' }, UNSTRUCTURED), '{"a":"\\u003cb\\u003e\\u0026\\u2028\\u2029"}')
  })

  it('writes control characters as JSON.stringify and Go agree (short escapes, lowercase \\u00xx)', () => {
    assert.equal(marshalGo({ a: '\n\t"\\\u0001' }, UNSTRUCTURED), '{"a":"\\n\\t\\"\\\\\\u0001"}')
  })

  it('sorts map keys byte-wise as Go does, array-index keys and characters beyond the BMP included', () => {
    assert.equal(marshalGo({ b: 1, 10: 2, 9: 3, a: 4 }, UNSTRUCTURED), '{"10":2,"9":3,"a":4,"b":1}')
    // U+1F600 is F0 9F 98 80 in UTF-8, after U+FFFD (EF BF BD); UTF-16 would put it first.
    assert.ok(compareGoStrings('\u{1F600}', '\uFFFD') > 0)
    assert.ok(compareGoStrings('a', 'ab') < 0)
    assert.equal(compareGoStrings('x', 'x'), 0)
  })

  it('writes custom resources (unstructured) with every key sorted, as upstream does', () => {
    const cr = { kind: 'Widget', apiVersion: 'example.com/v1', spec: { z: 1, a: [{ y: 1, b: 2 }] }, metadata: { name: 'w', namespace: 'd' } }
    assert.equal(
      apiObjectJson(cr),
      '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"d"},"spec":{"a":[{"b":2,"y":1}],"z":1}}\n',
    )
  })

  it('writes built-in objects in Go declaration order, whatever order they were built in', () => {
    const pod = {
      status: { phase: 'Pending' },
      spec: {
        restartPolicy: 'Always',
        containers: [{ terminationMessagePolicy: 'File', image: 'nginx', name: 'c', args: ['b', 'a'] }],
        initContainers: [{ name: 'i', image: 'busybox' }],
        volumes: [{ emptyDir: {}, name: 'v' }],
      },
      metadata: { uid: 'u', namespace: 'ns', name: 'p', labels: { z: '1', a: '2' }, resourceVersion: '5', creationTimestamp: '2024-01-01T00:00:00Z' },
      apiVersion: 'v1',
      kind: 'Pod',
    }
    const json = apiObjectJson(pod)
    assert.deepEqual(topKeys(json, []), ['kind', 'apiVersion', 'metadata', 'spec', 'status'])
    assert.deepEqual(topKeys(json, ['metadata']), ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'labels'])
    assert.deepEqual(topKeys(json, ['metadata', 'labels']), ['a', 'z'])
    assert.deepEqual(topKeys(json, ['spec']), ['volumes', 'initContainers', 'containers', 'restartPolicy'])
    assert.deepEqual(topKeys(json, ['spec', 'containers', '0']), ['name', 'image', 'args', 'terminationMessagePolicy'])
    assert.deepEqual(topKeys(json, ['spec', 'volumes', '0']), ['name', 'emptyDir'])
    // Lists keep their order.
    assert.match(json, /"args":\["b","a"\]/)
    assert.ok(json.endsWith('}\n'))
  })

  it('follows the declaration order of ObjectMeta, PodSpec, Container and Service', () => {
    const fields = (name: string) => {
      const shape = shapeOfType(name)
      return shape.kind === 'struct' ? shape.fields.map((f) => f.name) : []
    }
    assert.deepEqual(fields('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta').slice(0, 8), [
      'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
    ])
    assert.deepEqual(fields('io.k8s.api.core.v1.PodSpec').slice(0, 6), [
      'volumes', 'initContainers', 'containers', 'ephemeralContainers', 'restartPolicy', 'terminationGracePeriodSeconds',
    ])
    assert.deepEqual(fields('io.k8s.api.core.v1.Container').slice(0, 8), ['name', 'image', 'command', 'args', 'workingDir', 'ports', 'envFrom', 'env'])
    assert.deepEqual(fields('io.k8s.api.core.v1.Service'), ['kind', 'apiVersion', 'metadata', 'spec', 'status'])
    assert.deepEqual(fields('io.k8s.api.core.v1.ServiceSpec').slice(0, 5), ['ports', 'selector', 'clusterIP', 'clusterIPs', 'type'])
  })

  it('keeps fields the type tables do not know, after the known ones', () => {
    const json = apiObjectJson({ data: { k: 'v' }, futureField: true, kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' } })
    assert.equal(json, '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"},"data":{"k":"v"},"futureField":true}\n')
  })

  it('writes lists as kind, apiVersion, metadata, items', () => {
    const list = { items: [{ metadata: { name: 'a' }, data: { b: '1', a: '2' } }], metadata: { resourceVersion: '7' }, apiVersion: 'v1', kind: 'ConfigMapList' }
    assert.equal(apiObjectJson(list), '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"},"data":{"a":"2","b":"1"}}]}\n')
  })
})

describe('Status', () => {
  it("is written in metav1.Status's order, details and causes in theirs, empty fields left out", () => {
    const status = {
      code: 422,
      details: { causes: [{ field: 'spec.x', message: 'Required value', reason: 'FieldValueRequired' }], kind: 'Pod', name: 'p', group: '' },
      reason: 'Invalid',
      message: 'Pod "p" is invalid: spec.x: Required value',
      status: 'Failure',
      metadata: {},
      apiVersion: 'v1',
      kind: 'Status',
    }
    assert.equal(
      statusJson(status),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod \\"p\\" is invalid: spec.x: Required value",' +
        '"reason":"Invalid","details":{"name":"p","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.x"}]},"code":422}\n',
    )
  })

  it('keeps an empty details object and an empty metadata, as upstream writes them', () => {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'm', reason: 'NotFound', details: {}, code: 404 }
    assert.equal(statusJson(status), '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"NotFound","details":{},"code":404}\n')
  })

  it('leaves out a zero retryAfterSeconds and an empty name (omitempty)', () => {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Timeout', details: { name: '', retryAfterSeconds: 0 }, code: 504 }
    assert.equal(statusJson(status), '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"Timeout","details":{},"code":504}\n')
  })
})

describe('watch events', () => {
  it('are {"type","object"} lines with the object in its own order', () => {
    const line = watchEventJson('ADDED', { metadata: { name: 'c' }, apiVersion: 'v1', kind: 'ConfigMap' })
    assert.equal(line, '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"}}}\n')
  })

  it('carry a Status in an ERROR event in Status order', () => {
    const line = watchEventJson('ERROR', { code: 410, reason: 'Expired', message: 'too old', status: 'Failure', metadata: {}, apiVersion: 'v1', kind: 'Status' })
    assert.equal(line, '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old","reason":"Expired","code":410}}\n')
  })
})

describe('canonical order', () => {
  const deployment = {
    spec: { template: { spec: { containers: [{ image: 'i', name: 'c' }] }, metadata: { labels: { b: '1', a: '1' } } }, replicas: 2, selector: { matchLabels: { a: '1' } } },
    metadata: { name: 'd', namespace: 'n' },
    kind: 'Deployment',
    apiVersion: 'apps/v1',
  }

  it('copies an object into the order Go writes, so JSON.stringify writes the same text', () => {
    const copy = canonicalCopy(deployment)
    assert.deepEqual(copy, deployment)
    assert.ok(!isCanonical(deployment, shapeOfObject(deployment)))
    assert.ok(isCanonical(copy, shapeOfObject(copy)))
    assert.equal(`${JSON.stringify(copy)}\n`, apiObjectJson(deployment))
    assert.equal(apiObjectJson(copy), apiObjectJson(deployment))
  })

  it('takes a map whose keys are array indices in the wrong order for what it is', () => {
    const cm = canonicalCopy({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' }, data: { 9: 'a', 10: 'b' } })
    // JavaScript enumerates "9" before "10"; Go writes "10" first.
    assert.ok(!isCanonical(cm, shapeOfObject(cm)))
    assert.equal(apiObjectJson(cm), '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"},"data":{"10":"b","9":"a"}}\n')
  })

  it('finds a Status field Go would leave out', () => {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: '', code: 500 }
    assert.ok(!isCanonical(status, shapeOfObject(status)))
    assert.equal(statusJson(status), '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","code":500}\n')
  })
})

describe('indentGo (json.MarshalIndent)', () => {
  it('puts one element a line, two spaces a level, and leaves empty objects and lists as they are', () => {
    assert.equal(indentGo('{"a":{},"b":[],"c":[1,{"d":"x:,{"}]}'), '{\n  "a": {},\n  "b": [],\n  "c": [\n    1,\n    {\n      "d": "x:,{"\n    }\n  ]\n}')
  })

  it('keeps escapes inside strings as they are', () => {
    assert.equal(indentGo('{"a":"\\"}\\\\"}'), '{\n  "a": "\\"}\\\\"\n}')
  })
})
