import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiObjectJson, statusJson, watchEventJson } from '../../../core/encoding/api-json.js'
import { canonicalCopy, goEncodedCopy, isCanonical } from '../../../core/encoding/canonical.js'
import { compareGoStrings, indentGo, marshalGo, UNSTRUCTURED } from '../../../core/encoding/go-json.js'
import { shapeOfObject, shapeOfType } from '../../../core/encoding/json-shapes.js'

const T = '2026-01-01T00:00:00Z'

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
    // Go writes a container's resources though unset: a struct, not a pointer.
    assert.deepEqual(topKeys(json, ['spec', 'containers', '0']), ['name', 'image', 'args', 'resources', 'terminationMessagePolicy'])
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
    const json = apiObjectJson({ data: { k: 'v' }, futureField: true, kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', creationTimestamp: T } })
    assert.equal(json, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","creationTimestamp":"${T}"},"data":{"k":"v"},"futureField":true}\n`)
  })

  it('writes lists as kind, apiVersion, metadata, items', () => {
    const list = { items: [{ metadata: { name: 'a', creationTimestamp: T }, data: { b: '1', a: '2' } }], metadata: { resourceVersion: '7' }, apiVersion: 'v1', kind: 'ConfigMapList' }
    assert.equal(
      apiObjectJson(list),
      `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","creationTimestamp":"${T}"},"data":{"a":"2","b":"1"}}]}\n`,
    )
  })
})

describe("Go's empty values (what a Go struct encodes)", () => {
  it('writes the fields Go writes though unset: structs, plain values without omitempty, times as null', () => {
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'd', creationTimestamp: T }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'Started' }
    assert.equal(
      apiObjectJson(event),
      `{"kind":"Event","apiVersion":"v1","metadata":{"name":"e","namespace":"d","creationTimestamp":"${T}"},"involvedObject":{"kind":"Pod","name":"p"},` +
        '"reason":"Started","source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":null,"reportingComponent":"","reportingInstance":""}\n',
    )
  })

  it("writes a struct's empty form with its own always-written fields, and slices without omitempty as null", () => {
    const crd = goEncodedCopy({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'ws.example.com', creationTimestamp: T },
      spec: { group: 'example.com', names: { plural: 'ws', kind: 'W' }, scope: 'Namespaced', versions: [] },
    }) as Record<string, unknown>
    assert.deepEqual(crd['status'], { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: null })
  })

  it('leaves out omitempty zeros and empty lists and maps, and keeps a pointer set to its zero', () => {
    const webhooks = goEncodedCopy({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'v', creationTimestamp: T, labels: {} }, webhooks: [] })
    assert.deepEqual(webhooks, { kind: 'ValidatingWebhookConfiguration', apiVersion: 'admissionregistration.k8s.io/v1', metadata: { name: 'v', creationTimestamp: T } })
    const deployment = goEncodedCopy({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', creationTimestamp: T },
      spec: { replicas: 0, paused: false, selector: {}, template: { metadata: { creationTimestamp: null }, spec: { hostNetwork: false, containers: [{ name: 'c', image: 'i', stdin: false, resources: {} }] } } },
      status: { replicas: 0, observedGeneration: 0 },
    }) as { spec: Record<string, unknown> & { template: { spec: Record<string, unknown> } }; status: unknown }
    assert.equal(deployment.spec['replicas'], 0, 'replicas is a pointer: its 0 is a value')
    assert.equal('paused' in deployment.spec, false)
    assert.equal('hostNetwork' in deployment.spec.template.spec, false)
    assert.deepEqual(deployment.spec.template.spec['containers'], [{ name: 'c', image: 'i', resources: {} }])
    assert.deepEqual(deployment.status, {})
  })

  it('writes a field Go always writes though the object holds it as undefined', () => {
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', creationTimestamp: T }, involvedObject: {}, source: undefined }
    assert.deepEqual((goEncodedCopy(event) as Record<string, unknown>)['source'], {})
  })

  it('copies custom resources as they are, nulls and empty values included', () => {
    const cr = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { list: [], text: '', none: null } }
    assert.deepEqual(goEncodedCopy(cr), cr)
  })

  it("keeps a store's canonical copy as it was given: no field written or left out", () => {
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', labels: {} }, involvedObject: {}, count: 0 }
    assert.deepEqual(canonicalCopy(event), event)
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
    const line = watchEventJson('ADDED', { metadata: { name: 'c', creationTimestamp: T }, apiVersion: 'v1', kind: 'ConfigMap' })
    assert.equal(line, `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","creationTimestamp":"${T}"}}}\n`)
  })

  it('carry a Status in an ERROR event in Status order', () => {
    const line = watchEventJson('ERROR', { code: 410, reason: 'Expired', message: 'too old', status: 'Failure', metadata: {}, apiVersion: 'v1', kind: 'Status' })
    assert.equal(line, '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old","reason":"Expired","code":410}}\n')
  })
})

describe('canonical order', () => {
  const deployment = {
    spec: { template: { spec: { containers: [{ image: 'i', name: 'c' }] }, metadata: { labels: { b: '1', a: '1' } } }, replicas: 2, selector: { matchLabels: { a: '1' } } },
    metadata: { name: 'd', namespace: 'n', creationTimestamp: T },
    kind: 'Deployment',
    apiVersion: 'apps/v1',
  }

  it('copies an object into the order Go writes, values as they are', () => {
    const copy = canonicalCopy(deployment)
    assert.deepEqual(copy, deployment)
    assert.deepEqual(Object.keys(copy), ['kind', 'apiVersion', 'metadata', 'spec'])
    assert.deepEqual(Object.keys(copy.spec), ['replicas', 'selector', 'template'])
    assert.equal(apiObjectJson(copy), apiObjectJson(deployment))
  })

  it('copies a built-in object as Go encodes it, so JSON.stringify writes the same text', () => {
    const copy = goEncodedCopy(deployment)
    assert.ok(!isCanonical(deployment, shapeOfObject(deployment)))
    assert.ok(isCanonical(copy, shapeOfObject(copy)))
    assert.equal(`${JSON.stringify(copy)}\n`, apiObjectJson(deployment))
    assert.equal(apiObjectJson(copy), apiObjectJson(deployment))
    // What Go writes though unset: the template's metadata's time, a container's resources, the strategy and status structs.
    assert.deepEqual(copy.spec.template, {
      metadata: { creationTimestamp: null, labels: { a: '1', b: '1' } },
      spec: { containers: [{ name: 'c', image: 'i', resources: {} }] },
    })
    assert.deepEqual((copy.spec as Record<string, unknown>)['strategy'], {})
    assert.deepEqual((copy as Record<string, unknown>)['status'], {})
  })

  it('takes a map whose keys are array indices in the wrong order for what it is', () => {
    const cm = goEncodedCopy({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', creationTimestamp: T }, data: { 9: 'a', 10: 'b' } })
    // JavaScript enumerates "9" before "10"; Go writes "10" first.
    assert.ok(!isCanonical(cm, shapeOfObject(cm)))
    assert.equal(apiObjectJson(cm), `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","creationTimestamp":"${T}"},"data":{"10":"b","9":"a"}}\n`)
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

  it('writes what JSON.stringify indents by two spaces, for thousands of documents, long strings and Go\'s escapes included', () => {
    let state = 11
    const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32
    const strings = ['', 'a', 'x:,{}[]"', '\\"', '\u003c\u0026', 'é💥', 'y'.repeat(5000) + '\\"' + 'z'.repeat(100)]
    const value = (depth: number): unknown => {
      const r = next()
      if (depth > 0 && r < 0.25) return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, (_, i) => [`${strings[i % strings.length]}k${i}`, value(depth - 1)]))
      if (depth > 0 && r < 0.45) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth - 1))
      if (r < 0.6) return [null, true, false, 0, -1.5, 1e21][Math.floor(next() * 6)]
      return strings[Math.floor(next() * strings.length)]
    }
    for (let i = 0; i < 3000; i++) {
      const v = value(4)
      assert.equal(indentGo(JSON.stringify(v)), JSON.stringify(v, null, 2))
    }
    // Go's escapes of <, > and & are text, kept as written.
    assert.equal(indentGo('{"a":"\\u003c"}'), '{\n  "a": "\\u003c"\n}')
  })
})
