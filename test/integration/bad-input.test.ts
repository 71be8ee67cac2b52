/** Every bad request gets its Status, and the store is unchanged afterwards. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { eventually, startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'

/** The whole visible state of the configmaps and namespaces, to compare before and after. */
async function snapshot(api: TestClient) {
  const cms = await api.get('/api/v1/configmaps')
  const nss = await api.get('/api/v1/namespaces')
  return { cms: cms.body.items, nss: nss.body.items, rv: cms.body.metadata.resourceVersion }
}

async function refused(
  api: TestClient,
  request: () => ReturnType<TestClient['call']>,
  code: number,
  reason: string,
  message?: RegExp | string,
) {
  const before = await snapshot(api)
  const r = await request()
  assert.equal(r.status, code, r.text)
  assert.equal(r.body.kind, 'Status')
  assert.equal(r.body.status, 'Failure')
  assert.equal(r.body.reason, reason)
  assert.equal(r.body.code, code)
  if (typeof message === 'string') assert.equal(r.body.message, message)
  else if (message) assert.match(r.body.message, message)
  assert.deepEqual(await snapshot(api), before, 'the store changed')
  return r
}

describe('bad input', () => {
  it('refuses malformed JSON with 400', async () => {
    const api = await startServer()
    await refused(api, () => api.post(CM, '{"metadata": {"name": "x"'), 400, 'BadRequest', /json parse error/)
  })

  it('refuses malformed YAML with 400', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.call('POST', CM, { body: 'metadata:\n  name: [x\n', headers: { 'content-type': 'application/yaml' } }),
      400,
      'BadRequest',
      /error converting YAML to JSON/,
    )
  })

  it('refuses a body that is not an object with 400', async () => {
    const api = await startServer()
    await refused(api, () => api.post(CM, '[1,2]'), 400, 'BadRequest')
  })

  it("refuses a kind that does not match the URL with 400, in upstream's decoder's words", async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.post(CM, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }),
      400,
      'BadRequest',
      'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion',
    )
    await refused(
      api,
      () => api.post(CM, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } }),
      400,
      'BadRequest',
      'Deployment in version "v1" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion',
    )
  })

  it('refuses a kind no version of which is served there as not registered', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.post(CM, { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'x' } }),
      400,
      'BadRequest',
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    )
    await refused(
      api,
      () => api.post(CM, { apiVersion: 'v1', kind: 'Deployment', metadata: { name: 'x' } }),
      400,
      'BadRequest',
      'Deployment in version "v1" cannot be handled as a ConfigMap: no kind "Deployment" is registered for version "v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    )
  })

  it('refuses another served version of the kind as the API version the endpoint does not take', async () => {
    const api = await startServer()
    const hpa = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'x' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, maxReplicas: 2 } }
    const res = await api.post('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', hpa)
    assert.equal(res.status, 400, res.text)
    assert.equal(res.body.message, 'the API version in the data (autoscaling/v1) does not match the expected API version (autoscaling/v2)')
  })

  it('takes an empty apiVersion or kind as the URL\u2019s, as upstream\u2019s decoder defaults them', async () => {
    const api = await startServer()
    assert.equal((await api.post(CM, { apiVersion: '', kind: 'ConfigMap', metadata: { name: 'no-version' } })).status, 201)
    const noKind = await api.post(CM, { apiVersion: 'v1', kind: '', metadata: { name: 'no-kind' } })
    assert.equal(noKind.status, 201, noKind.text)
    assert.equal(noKind.body.kind, 'ConfigMap')
  })

  it('refuses a name that differs from the URL\u2019s with 400', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' } })
    await refused(
      api,
      () => api.put(`${CM}/cfg`, { metadata: { name: 'other' } }),
      400,
      'BadRequest',
      'the name of the object (other) does not match the name on the URL (cfg)',
    )
  })

  it('refuses a namespace that differs from the URL\u2019s with 400', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.post(CM, { metadata: { name: 'x', namespace: 'kube-system' } }),
      400,
      'BadRequest',
      'the namespace of the provided object does not match the namespace sent on the request',
    )
  })

  it('refuses an update whose object has no name, or another namespace, as upstream checks the name against the URL', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' }, data: { a: '1' } })
    await refused(api, () => api.put(`${CM}/cfg`, { metadata: {}, data: { a: '2' } }), 400, 'BadRequest', 'the name of the object (cfg based on URL) was undeterminable: name must be provided')
    await refused(
      api,
      () => api.put(`${CM}/cfg`, { metadata: { name: 'cfg', namespace: 'kube-system' }, data: { a: '2' } }),
      400,
      'BadRequest',
      'the namespace of the object (kube-system) does not match the namespace on the request (default)',
    )
    // A patch's result is checked the same way.
    const jsonPatch = (ops: unknown[]) => api.call('PATCH', `${CM}/cfg`, { body: ops, headers: { 'content-type': 'application/json-patch+json' } })
    await refused(api, () => jsonPatch([{ op: 'remove', path: '/metadata/name' }]), 400, 'BadRequest', 'the name of the object (cfg based on URL) was undeterminable: name must be provided')
    await refused(
      api,
      () => jsonPatch([{ op: 'replace', path: '/metadata/namespace', value: 'kube-system' }]),
      400,
      'BadRequest',
      'the namespace of the object (kube-system) does not match the namespace on the request (default)',
    )
  })

  it('refuses a PUT whose object carries another uid with the storage conflict, even without a resourceVersion', async () => {
    const api = await startServer()
    const stored = (await api.post(CM, { metadata: { name: 'cfg' }, data: { a: '1' } })).body
    for (const resourceVersion of [stored.metadata.resourceVersion, undefined]) {
      const body = { ...stored, metadata: { ...stored.metadata, uid: 'not-the-uid', resourceVersion }, data: { a: '2' } }
      await refused(
        api,
        () => api.put(`${CM}/cfg`, body),
        409,
        'Conflict',
        `Operation cannot be fulfilled on configmaps "cfg": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/cfg, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${stored.metadata.uid}`,
      )
    }
    // Its own uid is no obstacle; a patch naming another uid is a change of an immutable field.
    assert.equal((await api.put(`${CM}/cfg`, { ...stored, data: { a: '2' } })).status, 200)
    const patched = await api.call('PATCH', `${CM}/cfg`, { body: { metadata: { uid: 'not-the-uid' } }, headers: { 'content-type': 'application/merge-patch+json' } })
    assert.equal(patched.status, 422)
    assert.match(patched.body.message, /metadata\.uid: Invalid value: "not-the-uid": field is immutable/)
  })

  it('refuses ?export on a GET and an unknown includeObject of a table, as upstream does', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' } })
    for (const value of ['true', '1', 'maybe', ''])
      await refused(api, () => api.get(`${CM}/cfg?export=${value}`), 400, 'BadRequest', 'the export parameter, deprecated since v1.14, is no longer supported')
    assert.equal((await api.get(`${CM}/cfg?export=false`)).status, 200)
    const table = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }
    const bogus = await api.get(`${CM}?includeObject=Bogus`, { headers: table })
    assert.equal(bogus.status, 400)
    assert.equal(bogus.body.message, `Unable to convert to Table as requested: includeObject: Invalid value: "Bogus": must be 'Metadata', 'Object', 'None', or empty`)
    assert.equal((await api.get(`${CM}?includeObject=None`, { headers: table })).status, 200)
  })

  it('refuses a resourceVersion on create with 400', async () => {
    const api = await startServer()
    await refused(api, () => api.post(CM, { metadata: { name: 'x', resourceVersion: '5' } }), 400, 'BadRequest')
  })

  it('answers 404 for an unknown resource, group or version', async () => {
    const api = await startServer()
    for (const path of ['/api/v1/namespaces/default/widgets', '/apis/example.com/v1/things', '/api/v2/namespaces', '/nope'])
      await refused(api, () => api.get(path), 404, 'NotFound', 'the server could not find the requested resource')
    await refused(api, () => api.post('/apis/example.com/v1/namespaces/default/things', { metadata: { name: 'x' } }), 404, 'NotFound')
  })

  it('refuses an unsupported content type with 415', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.call('POST', CM, { body: 'name=x', headers: { 'content-type': 'text/plain' } }),
      415,
      'UnsupportedMediaType',
      /accepted media types include: application\/json, application\/yaml, application\/vnd.kubernetes.protobuf/,
    )
  })

  it('refuses an Accept it cannot serve with 406', async () => {
    const api = await startServer()
    await refused(api, () => api.get(CM, { headers: { accept: 'text/html' } }), 406, 'NotAcceptable')
  })

  it('refuses a body over 3 MiB with 413', async () => {
    const api = await startServer()
    const big = JSON.stringify({ metadata: { name: 'big' }, data: { k: 'x'.repeat(3 * 1024 * 1024) } })
    await refused(api, () => api.post(CM, big), 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728')
  })

  it('refuses a configmap over 1 MiB of data with 422', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.post(CM, { metadata: { name: 'big' }, data: { k: 'x'.repeat(1024 * 1024 + 1) } }),
      422,
      'Invalid',
      /Too long: may not be more than 1048576 bytes/,
    )
  })

  it('refuses a namespaced object in a namespace that does not exist with 404', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.post('/api/v1/namespaces/missing/configmaps', { metadata: { name: 'x' } }),
      404,
      'NotFound',
      'namespaces "missing" not found',
    )
  })

  it('refuses an existing name with 409 AlreadyExists', async () => {
    const api = await startServer()
    await api.post(CM, { metadata: { name: 'cfg' }, data: { a: 'b' } })
    await refused(api, () => api.post(CM, { metadata: { name: 'cfg' } }), 409, 'AlreadyExists', 'configmaps "cfg" already exists')
  })

  it('refuses an invalid name with 422 worded as upstream', async () => {
    const api = await startServer()
    const r = await refused(
      api,
      () => api.post(CM, { metadata: { name: 'Bad_Name' } }),
      422,
      'Invalid',
      `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    )
    assert.deepEqual(
      r.body.details.causes.map((c: { field: string; reason: string }) => [c.field, c.reason]),
      [['metadata.name', 'FieldValueInvalid']],
    )
  })

  it('refuses a missing name with 422 Required value', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.post(CM, { metadata: {} }),
      422,
      'Invalid',
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    )
  })

  it('refuses bad labels and data keys with every cause and its path', async () => {
    const api = await startServer()
    const r = await refused(
      api,
      () => api.post(CM, { metadata: { name: 'x', labels: { 'bad key': 'v', ok: 'bad value!' } }, data: { 'a/b': '1' } }),
      422,
      'Invalid',
    )
    assert.deepEqual(
      r.body.details.causes.map((c: { field: string }) => c.field),
      ['metadata.labels', 'metadata.labels', 'data[a/b]'],
    )
  })

  it('refuses metadata that is not an object with Go decoding wording, for create and update', async () => {
    const api = await startServer()
    const created = await api.post(CM, { metadata: { name: 'kept' }, data: { a: 'b' } })
    assert.equal(created.status, 201, created.text)
    for (const [metadata, kind] of [['s', 'string'], [7, 'number'], [[], 'array']] as const) {
      const message = `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal ${kind} into Go struct field ConfigMap.metadata of type v1.ObjectMeta`
      await refused(api, () => api.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { a: 'b' } }), 400, 'BadRequest', message)
      await refused(api, () => api.put(`${CM}/kept`, { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { a: 'c' } }), 400, 'BadRequest', message)
    }
  })

  it('refuses secret data that is not base64 with 400', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.post('/api/v1/namespaces/default/secrets', { metadata: { name: 's' }, data: { k: 'not base64!' } }),
      400,
      'BadRequest',
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3',
    )
  })

  it('refuses a TLS secret without its keys with 422', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.post('/api/v1/namespaces/default/secrets', { metadata: { name: 's' }, type: 'kubernetes.io/tls' }),
      422,
      'Invalid',
      'Secret "s" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]',
    )
  })

  it('refuses registry-login secrets whose data is not a JSON object with 422, the value redacted', async () => {
    const api = await startServer()
    const SECRETS = '/api/v1/namespaces/default/secrets'
    const b64 = (text: string) => Buffer.from(text).toString('base64')
    for (const [type, key] of [
      ['kubernetes.io/dockerconfigjson', '.dockerconfigjson'],
      ['kubernetes.io/dockercfg', '.dockercfg'],
    ] as const) {
      const name = type.endsWith('json') ? 'pull-json' : 'pull-cfg'
      const prefix = `Secret "${name}" is invalid: data[${key}]: Invalid value: "<secret contents redacted>": `
      const cases: [data: string, error: string][] = [
        ['not-json-hunter2', "invalid character 'o' in literal null (expecting 'u')"],
        ['{"auths": {"r.example": {"auth": "c2VjcmV0"}}', 'unexpected end of JSON input'],
        ['["hunter2"]', 'json: cannot unmarshal array into Go value of type map[string]interface {}'],
        ['{"auths" {}}', "invalid character '{' after object key"],
      ]
      for (const [data, error] of cases) {
        const r = await api.post(SECRETS, { metadata: { name }, type, data: { [key]: b64(data) } })
        assert.equal(r.status, 422, r.text)
        assert.equal(r.body.reason, 'Invalid')
        assert.equal(r.body.message, prefix + error)
        assert.deepEqual(r.body.details.causes, [{ reason: 'FieldValueInvalid', message: `Invalid value: "<secret contents redacted>": ${error}`, field: `data[${key}]` }])
        assert.ok(!r.text.includes('hunter2'), 'the secret value is shown')
        assert.equal((await api.get(`${SECRETS}/${name}`)).status, 404, 'the refused secret was stored')
      }
      // Missing the key: Required, as before.
      const missing = await api.post(SECRETS, { metadata: { name }, type, data: {} })
      assert.equal(missing.status, 422, missing.text)
      assert.equal(missing.body.message, `Secret "${name}" is invalid: data[${key}]: Required value`)

      // A valid object (or null) is kept; an update to something else is refused and the stored data stays.
      const good = b64('{"auths": {}}')
      const created = await api.post(SECRETS, { metadata: { name }, type, data: { [key]: good } })
      assert.equal(created.status, 201, created.text)
      const updated = await api.put(`${SECRETS}/${name}`, { ...created.body, data: { [key]: b64('hunter2 "x"') } })
      assert.equal(updated.status, 422, updated.text)
      assert.equal(updated.body.message, `${prefix}invalid character 'h' looking for beginning of value`)
      const stored = await api.get(`${SECRETS}/${name}`)
      assert.deepEqual(stored.body.data, { [key]: good })
      assert.equal(stored.body.metadata.resourceVersion, created.body.metadata.resourceVersion)
      const nulled = await api.put(`${SECRETS}/${name}`, { ...created.body, data: { [key]: b64(' null ') } })
      assert.equal(nulled.status, 200, nulled.text)
    }
  })

  it('refuses a bad namespace name with 422 citing the RFC 1123 label rule', async () => {
    const api = await startServer()
    await refused(api, () => api.post('/api/v1/namespaces', { metadata: { name: 'a.b' } }), 422, 'Invalid', /RFC 1123 label/)
  })

  it('refuses new content in a terminating namespace with 403', async () => {
    // No default service account: its creation and removal would change the store while the test compares it.
    const api = await startServer({ serviceAccountsController: false })
    await api.post('/api/v1/namespaces', { metadata: { name: 'going', finalizers: ['example.com/hold'] } })
    await api.delete('/api/v1/namespaces/going')
    // The namespace controller empties the namespace, then drops its `kubernetes` finalizer: wait for it,
    // or its write lands between the two looks at the store.
    await eventually('the namespace controller is done', async () => ((await api.get('/api/v1/namespaces/going')).body.spec?.finalizers ?? []).length === 0)
    await refused(
      api,
      () => api.post('/api/v1/namespaces/going/configmaps', { metadata: { name: 'x' } }),
      403,
      'Forbidden',
      'configmaps "x" is forbidden: unable to create new content in namespace going because it is being terminated',
    )
  })

  it('refuses update and patch on a collection, and create on a named path, with 405', async () => {
    const api = await startServer()
    await refused(api, () => api.put(CM, { metadata: { name: 'x' } }), 405, 'MethodNotAllowed')
    await refused(api, () => api.post(`${CM}/x`, { metadata: { name: 'x' } }), 405, 'MethodNotAllowed')
  })

  it('refuses a verb the resource does not offer with 405', async () => {
    const api = await startServer()
    await refused(api, () => api.get('/apis/authentication.k8s.io/v1/selfsubjectreviews'), 405, 'MethodNotAllowed')
  })

  it('refuses list options that contradict each other with 422', async () => {
    const api = await startServer()
    await refused(
      api,
      () => api.get(`${CM}?resourceVersionMatch=Exact`),
      422,
      'Invalid',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    )
    await refused(api, () => api.get(`${CM}?resourceVersion=1&resourceVersionMatch=Sometimes`), 422, 'Invalid', /Unsupported value: "Sometimes"/)
    await refused(api, () => api.get(`${CM}?resourceVersion=5&continue=abc`), 422, 'Invalid', /not allowed when using continue/)
  })

  it('refuses a stale resourceVersion with 409 Conflict, keeping the stored object', async () => {
    const api = await startServer()
    const created = await api.post(CM, { metadata: { name: 'cfg' }, data: { a: '1' } })
    await api.patch(`${CM}/cfg`, { data: { a: '2' } }, 'application/merge-patch+json')
    await refused(
      api,
      () => api.put(`${CM}/cfg`, { ...created.body, data: { a: '3' } }),
      409,
      'Conflict',
      'Operation cannot be fulfilled on configmaps "cfg": the object has been modified; please apply your changes to the latest version and try again',
    )
  })
})
