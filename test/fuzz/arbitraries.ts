/**
 * fast-check generators of requests: paths (known routes, names, junk),
 * query parameters (every list, write and delete option, with good and bad
 * values), headers (content types, accepts), bodies (objects shaped like
 * Kubernetes objects, JSON, YAML, protobuf bytes, junk), the four patch
 * types, and CustomResourceDefinition schemas.
 */
import fc from 'fast-check'
import { CONFIGMAPS, type FuzzRequest, THINGS } from './worst-inputs.js'
import { WIDGETS } from './fuzz-server.js'

const COLLECTIONS = [
  CONFIGMAPS,
  THINGS,
  WIDGETS,
  '/api/v1/namespaces',
  '/api/v1/namespaces/default/secrets',
  '/api/v1/namespaces/default/pods',
  '/api/v1/namespaces/default/services',
  '/apis/apps/v1/namespaces/default/deployments',
  '/apis/batch/v1/namespaces/default/jobs',
  '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  '/api/v1/configmaps',
  '/apis/fuzz.example.com/v1/things',
]

const NAMES = ['seed-0', 'seed-1', 'seed-2', 'fuzz', 'default', 'kube-system', '', '..', 'UPPER', 'a'.repeat(300), '%2F', 'x%00y', 'ü']

/** Text with the characters that break parsers: quotes, brackets, separators, control and non-ASCII characters. */
const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...'[]{}(),=!:;"\'\\/ ~.*-_aZ09\n\t\u0000é€'), maxLength: 60 }),
  fc.constantFrom('', ' ', 'null', '[]', '{}', '-1', '0', '9223372036854775808', 'NaN', 'true', '%', '%zz'),
)

const name = fc.oneof(fc.constantFrom(...NAMES), fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/))

export const path = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...COLLECTIONS) },
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...COLLECTIONS), name).map(([c, n]) => `${c}/${encodeURIComponent(n)}`) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...COLLECTIONS), name, fc.constantFrom('status', 'scale', 'log', 'junk', ''))
      .map(([c, n, s]) => `${c}/${encodeURIComponent(n)}/${s}`),
  },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.webSegment(), nasty.map(encodeURIComponent)), { maxLength: 7 }).map((segments) => `/${segments.join('/')}`) },
  { weight: 1, arbitrary: fc.constantFrom('/api', '/apis', '/version', '/healthz', '/readyz?verbose', '/metrics', '/openapi/v2', '/openapi/v3', '/apis/apps') },
)

const selectorTerm = fc.oneof(
  fc.tuple(fc.constantFrom('app', 'i', 'a.b/c', 'x'), fc.constantFrom('=', '==', '!=', ' in ', ' notin '), fc.constantFrom('fuzz', '0', '(a,b)', '(', ''), fc.boolean()).map(
    ([k, op, v, neg]) => `${neg ? '!' : ''}${k}${op}${v}`,
  ),
  nasty,
)
const selector = fc.array(selectorTerm, { maxLength: 6 }).map((terms) => terms.join(','))
const fieldSelector = fc
  .array(fc.tuple(fc.constantFrom('metadata.name', 'metadata.namespace', 'spec.size', 'status.phase', 'x'), fc.constantFrom('=', '==', '!=', '~'), fc.oneof(name, nasty)), { maxLength: 4 })
  .map((terms) => terms.map(([f, op, v]) => `${f}${op}${v}`).join(','))

/** Query parameters as [name, value] pairs; `watch` is left out (a watch answers with a stream that does not end). */
const parameter: fc.Arbitrary<[string, string]> = fc.oneof(
  // Not past the store's revision: the server would wait 3 s for it (upstream's 504 "Too large resource version").
  fc.constantFrom('', '0', '1', '5', 'x', '-1').map((v): [string, string] => ['resourceVersion', v]),
  selector.map((v): [string, string] => ['labelSelector', v]),
  fieldSelector.map((v): [string, string] => ['fieldSelector', v]),
  fc.tuple(
    fc.constantFrom(
      'limit',
      'continue',
      'resourceVersionMatch',
      'dryRun',
      'fieldManager',
      'fieldValidation',
      'force',
      'propagationPolicy',
      'gracePeriodSeconds',
      'orphanDependents',
      'pretty',
      'allowWatchBookmarks',
      'sendInitialEvents',
      'includeObject',
      'timeoutSeconds',
    ),
    fc.oneof(
      nasty,
      fc.constantFrom('0', '1', '2', '500', 'All', 'Strict', 'Warn', 'Ignore', 'Exact', 'NotOlderThan', 'true', 'false', 'Orphan', 'Foreground', 'Background', 'Object', 'None'),
    ),
  ),
)

export const query = fc.array(parameter, { maxLength: 4 }).map((pairs) => (pairs.length ? `?${new URLSearchParams(pairs).toString()}` : ''))

const CONTENT_TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'text/plain',
  'application/json; charset=utf-8',
  '',
]
const ACCEPTS = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
  'application/json;as=Table;v=v1;g=meta.k8s.io, application/json',
  'text/html',
  '*/*',
]

export const headers = fc
  .record(
    { 'content-type': fc.oneof(fc.constantFrom(...CONTENT_TYPES), nasty), accept: fc.oneof(fc.constantFrom(...ACCEPTS), nasty), 'user-agent': nasty },
    { requiredKeys: [] },
  )
  .map((h) => Object.fromEntries(Object.entries(h).filter(([k, v]) => k !== 'accept' || /^[\t\x20-\x7e]*$/.test(v))) as Record<string, string>)
  // Header values must be ByteStrings without line breaks, or Request itself refuses them.
  .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => /^[\t\x20-\x7e\x80-\xff]*$/.test(v))) as Record<string, string>)

const labels = fc.dictionary(fc.oneof(fc.constantFrom('app', 'i', 'a.b/c'), nasty), fc.oneof(fc.constantFrom('fuzz', '0'), nasty), { maxKeys: 3 })
const metadata = fc.record(
  {
    name: name,
    generateName: fc.constantFrom('gen-', ''),
    namespace: fc.constantFrom('default', 'other', ''),
    labels,
    annotations: labels,
    resourceVersion: fc.oneof(fc.constantFrom('1', '0', ''), nasty),
    finalizers: fc.array(fc.constantFrom('a/b', 'kubernetes', 'x'), { maxLength: 2 }),
    ownerReferences: fc.array(fc.record({ apiVersion: fc.constantFrom('v1'), kind: fc.constantFrom('ConfigMap'), name: name, uid: fc.uuid() }), { maxLength: 1 }),
  },
  { requiredKeys: [] },
)

/** JSON values with a bias towards Kubernetes shapes: objects of objects, lists of strings, quantities. */
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, 0, -1, 1.5, 2 ** 53, '', 'S', 'L', '100m', '1Gi', 'a/b'),
    nasty,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom('size', 'count', 'tags', 'owner', 'name', '$patch', '$retainKeys', 'spec', 'status'), nasty), tie('v'), { maxKeys: 4 }),
  ),
})).v

export const kubeObject = fc.record(
  {
    apiVersion: fc.constantFrom('v1', 'fuzz.example.com/v1', 'apps/v1', 'apiextensions.k8s.io/v1', 'x'),
    kind: fc.constantFrom('ConfigMap', 'Thing', 'Widget', 'Namespace', 'Deployment', 'CustomResourceDefinition', 'Status', 'x'),
    metadata,
    data: fc.dictionary(nasty, nasty, { maxKeys: 3 }),
    spec: value,
    status: value,
  },
  { requiredKeys: [] },
)

const pointer = fc
  .array(fc.oneof(fc.constantFrom('metadata', 'labels', 'data', 'spec', 'a', 'b', '0', '-', 'tags', 'name', '~1', '~0'), nasty), { maxLength: 4 })
  .map((tokens) => tokens.map((t) => `/${t}`).join(''))
const jsonPatchOp = fc.oneof(
  fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: pointer, value }),
  fc.record({ op: fc.constantFrom('remove'), path: pointer }),
  fc.record({ op: fc.constantFrom('move', 'copy'), from: pointer, path: pointer }),
  fc.record({ op: nasty, path: fc.oneof(pointer, nasty) }, { requiredKeys: [] }),
)

/** A PATCH body for `type`: a well-formed patch of that type most of the time, something else otherwise. */
function patchBody(type: string): fc.Arbitrary<string> {
  const shaped =
    type === 'application/json-patch+json'
      ? fc.array(jsonPatchOp, { maxLength: 6 }).map((ops) => JSON.stringify(ops))
      : type === 'application/apply-patch+yaml'
        ? kubeObject.map((o) => JSON.stringify(o))
        : fc.record({ metadata, data: fc.dictionary(nasty, fc.oneof(nasty, fc.constant(null)), { maxKeys: 3 }), spec: value }, { requiredKeys: [] }).map((o) => JSON.stringify(o))
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: nasty }, { weight: 1, arbitrary: fc.json() })
}

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']

/** An object body in one of the encodings a client may send, or junk claiming to be one. */
const objectBody = fc.oneof(
  { weight: 6, arbitrary: kubeObject.map((o) => ({ type: 'application/json', body: JSON.stringify(o) as string | Uint8Array })) },
  { weight: 2, arbitrary: kubeObject.map((o) => ({ type: 'application/yaml', body: toYamlish(o) as string | Uint8Array })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => ({ type: 'application/vnd.kubernetes.protobuf', body: Uint8Array.of(0x6b, 0x38, 0x73, 0x00, ...b) as string | Uint8Array })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...CONTENT_TYPES), nasty).map(([type, body]) => ({ type, body: body as string | Uint8Array })) },
)

/** JSON is YAML; indenting it as block YAML as well exercises the block parser. */
function toYamlish(value: unknown, indent = ''): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return value.length ? value.map((v) => `\n${indent}- ${toYamlish(v, `${indent}  `)}`).join('') : '[]'
  const entries = Object.entries(value)
  return entries.length ? entries.map(([k, v]) => `\n${indent}${JSON.stringify(k)}: ${toYamlish(v, `${indent}  `)}`).join('') : '{}'
}

/** The fuzz suite's own resources, with what a body must say to be accepted there. */
const TARGETS = [
  { collection: CONFIGMAPS, apiVersion: 'v1', kind: 'ConfigMap' },
  { collection: THINGS, apiVersion: 'fuzz.example.com/v1', kind: 'Thing' },
  { collection: WIDGETS, apiVersion: 'fuzz.example.com/v1', kind: 'Widget' },
]

const widgetSpec = fc.record(
  { size: fc.constantFrom('S', 'M', 'L', 'XL'), count: fc.integer({ min: -1, max: 101 }), tags: fc.array(fc.constantFrom('a', 'b', 'a'.repeat(21)), { maxLength: 3 }), owner: fc.record({ name: nasty }) },
  { requiredKeys: [] },
)

/** Writes that name a real resource and kind, so that most of them get past decoding into validation, patching and storage. */
const coherentWrite: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.constantFrom(...TARGETS),
    fc.constantFrom('seed-0', 'seed-1', 'seed-2', 'new-0', 'new-1'),
    fc.oneof(value, widgetSpec),
    fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), nasty, { maxKeys: 3 }),
    labels,
    fc.constantFrom('POST', 'PUT', ...PATCH_TYPES, ...PATCH_TYPES),
    fc.constantFrom('', '?fieldManager=fuzz', '?dryRun=All', '?fieldValidation=Strict', '?fieldManager=fuzz&force=true', '/status'),
  )
  .chain(([target, objectName, spec, data, objectLabels, verb, suffix]) => {
    const object: Record<string, unknown> = { apiVersion: target.apiVersion, kind: target.kind, metadata: { name: objectName, labels: objectLabels } }
    if (target.kind === 'ConfigMap') object['data'] = data
    else object['spec'] = spec
    const json = { 'content-type': 'application/json' }
    const at = `/${objectName}${suffix}`
    if (verb === 'POST') return fc.constant<FuzzRequest>({ method: 'POST', path: target.collection + (suffix.startsWith('?') ? suffix : ''), headers: json, body: JSON.stringify(object) })
    if (verb === 'PUT') return fc.constant<FuzzRequest>({ method: 'PUT', path: target.collection + at, headers: json, body: JSON.stringify(object) })
    const patchPath = target.collection + at + (verb === 'application/apply-patch+yaml' && !suffix.includes('fieldManager') ? `${suffix.includes('?') ? '&' : '?'}fieldManager=fuzz` : '')
    const body = verb === 'application/apply-patch+yaml' ? fc.constant(JSON.stringify(object)) : patchBody(verb)
    return body.map((b): FuzzRequest => ({ method: 'PATCH', path: patchPath, headers: { 'content-type': verb }, body: b }))
  })

const SUITE_GROUND = /^\/(api\/v1\/namespaces(\/default)?|apis\/apiextensions\.k8s\.io\/v1\/customresourcedefinitions(\/(things|widgets)\.fuzz\.example\.com)?)\/?(\?|$)/

/** Any request: a read, a write with an object body, a patch of one of the four types, or a delete. */
export const request: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 4, arbitrary: coherentWrite },
  fc.tuple(path, query, headers).map(([p, q, h]): FuzzRequest => ({ method: 'GET', path: p + q, headers: h })),
  fc.tuple(fc.constantFrom('POST', 'PUT'), path, query, headers, objectBody).map(
    ([method, p, q, h, b]): FuzzRequest => ({ method, path: p + q, headers: { ...h, 'content-type': b.type }, body: b.body }),
  ),
  fc
    .tuple(path, query, headers, fc.constantFrom(...PATCH_TYPES))
    .chain(([p, q, h, type]) => patchBody(type).map((body): FuzzRequest => ({ method: 'PATCH', path: p + q, headers: { ...h, 'content-type': type }, body }))),
  fc
    .tuple(path, query, headers, fc.option(kubeObject.map((o) => JSON.stringify(o)), { nil: undefined }))
    .map(([p, q, h, body]): FuzzRequest => {
      const req: FuzzRequest = { method: 'DELETE', path: p + q, headers: h }
      if (body !== undefined) req.body = body
      return req
    })
    // The suite's own ground: deleting the default namespace or every definition would leave nothing to fuzz.
    .filter((req) => !SUITE_GROUND.test(req.path)),
)

/** An OpenAPI v3 schema as CRDs carry it: typed trees with the keywords validation, pruning and CEL read. */
const schema = fc.letrec<{ s: Record<string, unknown> }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small' },
    fc.record(
      {
        type: fc.constantFrom('string', 'integer', 'number', 'boolean'),
        format: fc.constantFrom('date-time', 'int-or-string', 'byte', 'x'),
        pattern: fc.constantFrom('^a+$', '^[a-z]{1,5}$', '(', ''),
        maxLength: fc.nat(10),
        minimum: fc.integer({ min: -5, max: 5 }),
        enum: fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.nat(3)), { maxLength: 3 }),
        default: value,
        nullable: fc.boolean(),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record(
      {
        type: fc.constant('object'),
        properties: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie('s'), { maxKeys: 3 }),
        required: fc.array(fc.stringMatching(/^[a-z]{1,6}$/), { maxLength: 2 }),
        'x-kubernetes-preserve-unknown-fields': fc.boolean(),
        'x-kubernetes-map-type': fc.constantFrom('atomic', 'granular', 'x'),
        'x-kubernetes-validations': fc.array(
          fc.record({ rule: fc.constantFrom('self == self', 'size(self) < 3', 'self.x', 'has(self.a)', '!', 'self.all(k, k != "")'), message: fc.string({ maxLength: 10 }) }),
          { maxLength: 2 },
        ),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record(
      {
        type: fc.constant('array'),
        items: tie('s'),
        maxItems: fc.nat(5),
        'x-kubernetes-list-type': fc.constantFrom('atomic', 'set', 'map', 'x'),
        'x-kubernetes-list-map-keys': fc.array(fc.stringMatching(/^[a-z]{1,6}$/), { maxLength: 2 }),
      },
      { requiredKeys: ['type'] },
    ),
  ),
})).s

/** A CustomResourceDefinition with a random schema, and an instance of it to try once it is served. */
export const definitionWithInstance = fc.tuple(fc.stringMatching(/^[a-z]{3,8}$/), schema, value).map(([plural, spec, instanceSpec]) => ({
  plural,
  definition: {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.random.example.com` },
    spec: {
      group: 'random.example.com',
      scope: 'Namespaced',
      names: { plural, singular: plural, kind: `K${plural}` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  },
  instance: { apiVersion: 'random.example.com/v1', kind: `K${plural}`, metadata: { name: 'one' }, spec: instanceSpec },
}))
