/**
 * Bodies compared as text, byte for byte, as clients' own tests compare
 * them: Status in metav1.Status's field order with a final newline, objects
 * in their Go types' order, documents as upstream writes each of them.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const PODS = '/api/v1/namespaces/default/pods'

/** The Status upstream writes for an error, as one line. */
function status(message: string, reason: string, code: number, details?: string): string {
  const detailsText = details === undefined ? '' : `"details":${details},`
  return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":${JSON.stringify(message)},"reason":"${reason}",${detailsText}"code":${code}}\n`
}

async function withConfigMap(): Promise<{ api: TestClient; text: string; uid: string; rv: string; created: string; managed: string }> {
  const api = await startServer()
  const res = await api.post(CM, { data: { b: '2', a: '<1>' }, apiVersion: 'v1', metadata: { labels: { z: 'z', a: 'a' }, name: 'c' }, kind: 'ConfigMap' })
  assert.equal(res.status, 201)
  const meta = res.body.metadata as { uid: string; resourceVersion: string; creationTimestamp: string }
  // Sent without a User-Agent: upstream records the write under `unknown`, FieldsV1 with `.` first at each level.
  const managed =
    `"managedFields":[{"manager":"unknown","operation":"Update","apiVersion":"v1","time":"${meta.creationTimestamp}","fieldsType":"FieldsV1",` +
    `"fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{".":{},"f:a":{},"f:z":{}}}}}]`
  return { api, text: res.text, uid: meta.uid, rv: meta.resourceVersion, created: meta.creationTimestamp, managed }
}

describe('objects on the wire', () => {
  it('writes a created object in ConfigMap field order, labels sorted, HTML characters escaped, a newline at the end', async () => {
    const { api, text, uid, rv, created, managed } = await withConfigMap()
    const expected =
      `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default","uid":"${uid}","resourceVersion":"${rv}",` +
      `"creationTimestamp":"${created}","labels":{"a":"a","z":"z"},${managed}},"data":{"a":"\\u003c1\\u003e","b":"2"}}\n`
    assert.equal(text, expected)
    assert.equal((await api.get(`${CM}/c`)).text, expected)
  })

  it('writes a list as kind, apiVersion, metadata, items, each item in its own order', async () => {
    const { api, uid, rv, created, managed } = await withConfigMap()
    const list = await api.get(CM)
    assert.equal(
      list.text,
      `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"${list.body.metadata.resourceVersion}"},"items":[` +
        `{"metadata":{"name":"c","namespace":"default","uid":"${uid}","resourceVersion":"${rv}","creationTimestamp":"${created}",` +
        `"labels":{"a":"a","z":"z"},${managed}},"data":{"a":"\\u003c1\\u003e","b":"2"}}]}\n`,
    )
  })

  it('writes a pod with the defaults filled in PodSpec and Container declaration order', async () => {
    const api = await startServer()
    const res = await api.post(PODS, { spec: { containers: [{ image: 'nginx', name: 'web' }] }, metadata: { name: 'p' } })
    assert.equal(res.status, 201)
    const spec = res.text.slice(res.text.indexOf('"spec":'))
    // The ServiceAccount plugin's token volume comes first, where PodSpec declares volumes, and its mount after resources.
    assert.match(
      spec,
      /^"spec":\{"volumes":\[\{"name":"kube-api-access-\w{5}","projected":\{"sources":\[\{"serviceAccountToken":\{"expirationSeconds":3607,"path":"token"\}\},.*\],"defaultMode":420\}\}\],"containers":\[\{"name":"web","image":"nginx","resources":\{\},"volumeMounts":\[\{"name":"kube-api-access-\w{5}","readOnly":true,"mountPath":"\/var\/run\/secrets\/kubernetes.io\/serviceaccount"\}\],"terminationMessagePath":"\/dev\/termination-log",/,
    )
    assert.match(spec, /"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",/)
  })

  it('answers a delete with a Success Status in upstream order, without a code', async () => {
    const { api, uid } = await withConfigMap()
    const res = await api.delete(`${CM}/c`)
    assert.equal(res.status, 200)
    assert.equal(res.text, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"c","kind":"configmaps","uid":"${uid}"}}\n`)
  })

  it('streams watch events as {"type","object"} lines in the object order', async () => {
    const { api, uid, rv, created, managed } = await withConfigMap()
    const res = await api.server.fetch(new Request(`http://in-process${CM}?watch=true&resourceVersion=0`))
    const reader = res.body!.getReader()
    const { value } = await reader.read()
    await reader.cancel()
    assert.equal(
      new TextDecoder().decode(value),
      `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default","uid":"${uid}",` +
        `"resourceVersion":"${rv}","creationTimestamp":"${created}","labels":{"a":"a","z":"z"},${managed}},"data":{"a":"\\u003c1\\u003e","b":"2"}}}\n`,
    )
  })

  it('writes a Table in metav1.Table order with each row object as PartialObjectMetadata', async () => {
    const { api } = await withConfigMap()
    const res = await api.get(CM, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })
    assert.match(res.text, /^\{"kind":"Table","apiVersion":"meta.k8s.io\/v1","metadata":\{"resourceVersion":"\d+"\},"columnDefinitions":\[\{"name":"Name","type":"string","format":"name","description":/)
    assert.match(res.text, /"rows":\[\{"cells":\["c",2,"[^"]+"\],"object":\{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io\/v1","metadata":\{"name":"c",/)
    assert.ok(res.text.endsWith('}]}\n'))
  })
})

describe('errors on the wire', () => {
  it('404 for a missing object', async () => {
    const api = await startServer()
    const res = await api.get(`${CM}/nope`)
    assert.equal(res.status, 404)
    assert.equal(res.text, status('configmaps "nope" not found', 'NotFound', 404, '{"name":"nope","kind":"configmaps"}'))
  })

  it('404 with empty details for a path that names no resource', async () => {
    const api = await startServer()
    const res = await api.get('/api/v1/namespaces/default/widgets')
    assert.equal(res.status, 404)
    assert.equal(res.text, status('the server could not find the requested resource', 'NotFound', 404, '{}'))
  })

  it('404 naming the group of a missing object outside the core group', async () => {
    const api = await startServer()
    const res = await api.get('/apis/apps/v1/namespaces/default/deployments/d')
    assert.equal(res.text, status('deployments.apps "d" not found', 'NotFound', 404, '{"name":"d","group":"apps","kind":"deployments"}'))
  })

  it('409 AlreadyExists for a second create, and the first object stays as it was', async () => {
    const { api, text } = await withConfigMap()
    const res = await api.post(CM, { metadata: { name: 'c' }, data: { other: 'x' } })
    assert.equal(res.status, 409)
    assert.equal(res.text, status('configmaps "c" already exists', 'AlreadyExists', 409, '{"name":"c","kind":"configmaps"}'))
    assert.equal((await api.get(`${CM}/c`)).text, text)
  })

  it('409 Conflict for a stale resourceVersion, and the object stays as it was', async () => {
    const { api, text } = await withConfigMap()
    const res = await api.put(`${CM}/c`, { metadata: { name: 'c', resourceVersion: '1' }, data: { other: 'x' } })
    assert.equal(res.status, 409)
    assert.equal(
      res.text,
      status(
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again',
        'Conflict',
        409,
        '{"name":"c","kind":"configmaps"}',
      ),
    )
    assert.equal((await api.get(`${CM}/c`)).text, text)
  })

  it('422 Invalid with its causes in StatusCause order, and nothing stored', async () => {
    const api = await startServer()
    const res = await api.post(PODS, { metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] } })
    assert.equal(res.status, 422)
    assert.equal(
      res.text,
      status(
        'Pod "p" is invalid: spec.containers[0].image: Required value',
        'Invalid',
        422,
        '{"name":"p","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers[0].image"}]}',
      ),
    )
    assert.equal((await api.get(`${PODS}/p`)).status, 404)
  })

  it('400 BadRequest without details for an unknown field in Strict mode, and nothing stored', async () => {
    const api = await startServer()
    const res = await api.post(`${CM}?fieldValidation=Strict`, { metadata: { name: 'c' }, foo: 1 })
    assert.equal(res.status, 400)
    assert.equal(res.text, status('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "foo"', 'BadRequest', 400))
    assert.equal((await api.get(`${CM}/c`)).status, 404)
  })

  it('400 naming the kind for a body sent as protobuf that is not, quoting its start, and nothing stored', async () => {
    const api = await startServer()
    const sent = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })
    const res = await api.post(CM, sent, { headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } })
    assert.equal(res.status, 400)
    assert.equal(
      res.body.message,
      `the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (${sent.slice(0, 30)} ...)`,
    )
    const binary = await api.put(`${CM}/c`, Uint8Array.of(1, 2, 3), { headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } })
    assert.match(binary.body.message, /expected prefix \[107 56 115 0\] \(010203\)$/)
    assert.equal((await api.get(`${CM}/c`)).status, 404)
  })

  it('405 MethodNotAllowed in the router\u2019s words, with empty details, and nothing stored', async () => {
    const api = await startServer()
    const res = await api.post(`${CM}/c`, { metadata: { name: 'c' } })
    assert.equal(res.status, 405)
    assert.equal(res.text, status('the server does not allow this method on the requested resource', 'MethodNotAllowed', 405, '{}'))
    assert.equal((await api.get(`${CM}/c`)).status, 404)
  })
})

describe('documents on the wire', () => {
  it('/version indented by two spaces without a final newline, as WriteRawJSON writes it', async () => {
    const api = await startServer()
    const res = await api.get('/version')
    assert.match(res.text, /^\{\n {2}"major": "1",\n {2}"minor": "\d+",\n {2}"gitVersion": "v[^"]+",\n {2}"gitCommit": /)
    assert.ok(res.text.endsWith('"platform": "linux/amd64"\n}'))
  })

  it('/api as APIVersions without an apiVersion, with a final newline', async () => {
    const api = await startServer()
    const res = await api.get('/api')
    assert.equal(res.text, '{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"in-process"}]}\n')
  })

  it('APIResourceList entries in APIResource order: group and version before kind', async () => {
    const api = await startServer()
    const res = await api.get('/apis/apps/v1')
    assert.ok(res.text.startsWith('{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[{"name":"controllerrevisions","singularName":"controllerrevision","namespaced":true,"kind":"ControllerRevision","verbs":['))
    assert.match(res.text, /\{"name":"deployments\/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":\["get","patch","update"\]\}/)
    assert.ok(res.text.endsWith(']}\n'))
  })

  it('aggregated discovery in apidiscovery v2 order', async () => {
    const api = await startServer()
    const res = await api.get('/api', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } })
    assert.ok(res.text.startsWith('{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[{"metadata":{"creationTimestamp":null},"versions":[{"version":"v1","resources":[{"resource":"bindings","responseKind":{"group":"","version":"v1","kind":"Binding"},"scope":"Namespaced","singularResource":"binding","verbs":["create"]}'))
    assert.ok(res.text.endsWith('"freshness":"Current"}]}]}\n'))
  })

  it('/openapi/v3 index with its paths sorted, no final newline', async () => {
    const api = await startServer()
    const res = await api.get('/openapi/v3')
    const keys = Object.keys(res.body.paths)
    assert.deepEqual(keys, [...keys].sort())
    assert.ok(res.text.startsWith('{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash='))
    assert.ok(res.text.endsWith('}}}'))
  })

  it('404 without a body for an OpenAPI v3 group/version that does not exist', async () => {
    const api = await startServer()
    for (const path of ['/openapi/v3/apis/example.com/v1', '/openapi/v3/apis/apps/v9', '/openapi/v3/api/v2', '/openapi/v3/apis/apps']) {
      const res = await api.get(path)
      assert.equal(res.status, 404, path)
      assert.equal(res.text, '', path)
    }
  })

  it('406 without a body for /openapi/v2 in a media type it does not serve', async () => {
    const api = await startServer()
    const res = await api.get('/openapi/v2', { headers: { accept: 'text/html' } })
    assert.equal(res.status, 406)
    assert.equal(res.text, '')
  })
})

describe('indented JSON for people', () => {
  const notFound = '{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n  "message": "configmaps \\"x\\" not found",\n  "reason": "NotFound",\n  "details": {\n    "name": "x",\n    "kind": "configmaps"\n  },\n  "code": 404\n}'

  it('indents for curl, Wget and browsers as json.MarshalIndent does, without a final newline', async () => {
    const api = await startServer()
    for (const agent of ['curl/8.5.0', 'Wget/1.21', 'Mozilla/5.0 (X11; Linux x86_64)']) {
      const res = await api.get(`${CM}/x`, { headers: { 'user-agent': agent } })
      assert.equal(res.status, 404)
      assert.equal(res.text, notFound, agent)
    }
  })

  it('follows ?pretty= over the client, as Go parses a boolean', async () => {
    const api = await startServer()
    assert.equal((await api.get(`${CM}/x?pretty=true`)).text, notFound)
    assert.equal((await api.get(`${CM}/x?pretty=1`)).text, notFound)
    assert.equal((await api.get(`${CM}/x?pretty=false`, { headers: { 'user-agent': 'curl/8.5.0' } })).text, status('configmaps "x" not found', 'NotFound', 404, '{"name":"x","kind":"configmaps"}'))
    assert.equal((await api.get(`${CM}/x?pretty=yes`)).text, status('configmaps "x" not found', 'NotFound', 404, '{"name":"x","kind":"configmaps"}'))
  })

  it('leaves an answer over a megabyte, and a list written as it is read, unindented', async () => {
    const api = await startServer()
    const curl = { 'user-agent': 'curl/8.5.0' }
    for (let i = 0; i < 3; i++) assert.equal((await api.post(CM, { metadata: { name: `big-${i}` }, data: { a: 'x'.repeat(500_000) } })).status, 201)
    const list = await api.get(CM, { headers: curl })
    assert.equal(list.status, 200)
    assert.ok(list.text.startsWith('{"kind":"ConfigMapList"'), list.text.slice(0, 40))
    assert.equal(list.body.items.length, 3)
    // One object under the bound is indented as before.
    assert.match((await api.get(`${CM}/big-0`, { headers: curl })).text, /^\{\n {2}"kind": "ConfigMap",\n/)
  })

  it('leaves watch lines, /version and OpenAPI documents as they are', async () => {
    const { api } = await withConfigMap()
    const curl = { 'user-agent': 'curl/8.5.0' }
    const res = await api.server.fetch(new Request(`http://in-process${CM}?watch=true&resourceVersion=0`, { headers: curl }))
    const reader = res.body!.getReader()
    const { value } = await reader.read()
    await reader.cancel()
    assert.match(new TextDecoder().decode(value), /^\{"type":"ADDED","object":\{"kind":"ConfigMap",.*\}\}\n$/)
    assert.match((await api.get('/version', { headers: curl })).text, /^\{\n {2}"major": "1",\n/)
    assert.match((await api.get('/openapi/v3', { headers: curl })).text, /^\{"paths":\{"api\/v1":/)
  })
})
