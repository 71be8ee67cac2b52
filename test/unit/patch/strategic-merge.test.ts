import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyStrategicMergePatch, PatchError, type PatchErrorKind } from '../../../core/patch/strategic-merge.js'

const POD = 'io.k8s.api.core.v1.Pod'
const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment'
const CONFIGMAP = 'io.k8s.api.core.v1.ConfigMap'
const SERVICE = 'io.k8s.api.core.v1.Service'
const REVISION = 'io.k8s.api.apps.v1.ControllerRevision'

type Obj = Record<string, unknown>

function pod(): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'default',
      labels: { app: 'web', tier: 'front' },
      finalizers: ['a.example.com/x', 'b.example.com/y'],
    },
    spec: {
      securityContext: { runAsUser: 1000 },
      containers: [
        {
          name: 'app',
          image: 'nginx:1',
          args: ['--a', '--b'],
          ports: [
            { containerPort: 80, protocol: 'TCP' },
            { containerPort: 443, protocol: 'TCP' },
          ],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          volumeMounts: [
            { name: 'data', mountPath: '/data' },
            { name: 'cfg', mountPath: '/etc/cfg' },
          ],
        },
        { name: 'sidecar', image: 'busybox' },
      ],
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'cfg' } },
      ],
    },
  }
}

function deployment(): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } },
    },
  }
}

function service(): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec: {
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
        { name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' },
      ],
    },
  }
}

/** Reaches into a plain JSON object by a dotted path with list indexes. */
function at(obj: Obj, path: string): Obj {
  let v: unknown = obj
  for (const part of path.split('.')) v = (v as Record<string, unknown>)[part]
  return v as Obj
}

/** A copy of `base` with `edit` applied: each case says only what changes. */
function changed(base: () => Obj, edit: (o: Obj) => void): Obj {
  const o = base()
  edit(o)
  return o
}

/** name, type, original, patch, expected result */
const CASES: Array<[string, string, Obj, Obj, Obj]> = [
  [
    'maps merge key by key and null deletes a key',
    POD,
    pod(),
    { metadata: { labels: { tier: null, track: 'stable' } } },
    changed(pod, (o) => (at(o, 'metadata').labels = { app: 'web', track: 'stable' })),
  ],
  [
    'a null for a field the original lacks changes nothing',
    POD,
    pod(),
    { metadata: { annotations: null }, spec: { nodeName: null } },
    pod(),
  ],
  [
    'containers merge by name; a scalar field of the matched container is replaced, the others stay',
    POD,
    pod(),
    { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } },
    changed(pod, (o) => (at(o, 'spec.containers.0').image = 'nginx:2')),
  ],
  [
    'new merge-list items come in patch order, ahead of the server-only items (upstream order rules)',
    POD,
    pod(),
    { spec: { containers: [{ name: 'extra', image: 'x' }, { name: 'app', image: 'nginx:2' }] } },
    changed(pod, (o) => {
      const [app, sidecar] = at(o, 'spec').containers as Obj[]
      ;(app as Obj).image = 'nginx:2'
      at(o, 'spec').containers = [{ name: 'extra', image: 'x' }, app, sidecar]
    }),
  ],
  [
    'env merges by name inside a merged container; a list without a strategy (args) replaces',
    POD,
    pod(),
    { spec: { containers: [{ name: 'app', env: [{ name: 'B', value: '20' }], args: ['--c'] }] } },
    changed(pod, (o) => {
      const app = at(o, 'spec.containers.0')
      app.env = [
        { name: 'A', value: '1' },
        { name: 'B', value: '20' },
      ]
      app.args = ['--c']
    }),
  ],
  [
    'container ports merge by containerPort',
    POD,
    pod(),
    { spec: { containers: [{ name: 'app', ports: [{ containerPort: 443, name: 'tls' }] }] } },
    changed(pod, (o) => {
      at(o, 'spec.containers.0').ports = [
        { containerPort: 80, protocol: 'TCP' },
        { containerPort: 443, protocol: 'TCP', name: 'tls' },
      ]
    }),
  ],
  [
    'volumeMounts merge by mountPath',
    POD,
    pod(),
    { spec: { containers: [{ name: 'app', volumeMounts: [{ mountPath: '/etc/cfg', readOnly: true }] }] } },
    changed(pod, (o) => {
      at(o, 'spec.containers.0').volumeMounts = [
        { name: 'data', mountPath: '/data' },
        { name: 'cfg', mountPath: '/etc/cfg', readOnly: true },
      ]
    }),
  ],
  [
    '$patch: delete in a list item removes the item with that key',
    POD,
    pod(),
    { spec: { containers: [{ name: 'app', env: [{ name: 'A', $patch: 'delete' }] }, { name: 'sidecar', $patch: 'delete' }] } },
    changed(pod, (o) => {
      const app = at(o, 'spec.containers.0')
      app.env = [{ name: 'B', value: '2' }]
      at(o, 'spec').containers = [app]
    }),
  ],
  [
    '$patch: replace in a list makes the list the patch items',
    POD,
    pod(),
    { spec: { containers: [{ name: 'solo', image: 'x' }, { $patch: 'replace' }] } },
    changed(pod, (o) => (at(o, 'spec').containers = [{ name: 'solo', image: 'x' }])),
  ],
  [
    '$patch: replace on a map replaces it',
    POD,
    pod(),
    { metadata: { labels: { $patch: 'replace', only: 'this' } } },
    changed(pod, (o) => (at(o, 'metadata').labels = { only: 'this' })),
  ],
  [
    '$patch: delete on a map leaves it empty, as upstream',
    POD,
    pod(),
    { spec: { securityContext: { $patch: 'delete' } } },
    changed(pod, (o) => (at(o, 'spec').securityContext = {})),
  ],
  [
    'a map carrying $patch for a field the original lacks is left out, as upstream',
    POD,
    changed(pod, (o) => delete at(o, 'spec').securityContext),
    { spec: { securityContext: { $patch: 'replace', runAsUser: 1 }, hostname: 'h' } },
    changed(pod, (o) => {
      delete at(o, 'spec').securityContext
      at(o, 'spec').hostname = 'h'
    }),
  ],
  [
    'finalizers merge as a set: only new values are added, the patch order first',
    POD,
    pod(),
    { metadata: { finalizers: ['c.example.com/z', 'a.example.com/x'] } },
    changed(
      pod,
      (o) => (at(o, 'metadata').finalizers = ['c.example.com/z', 'a.example.com/x', 'b.example.com/y']),
    ),
  ],
  [
    '$deleteFromPrimitiveList removes values from a primitive merge list',
    POD,
    pod(),
    { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.example.com/x', 'not-there'] } },
    changed(pod, (o) => (at(o, 'metadata').finalizers = ['b.example.com/y'])),
  ],
  [
    '$setElementOrder orders a primitive list, with additions and deletions',
    POD,
    pod(),
    {
      metadata: {
        '$setElementOrder/finalizers': ['c.example.com/z', 'a.example.com/x'],
        finalizers: ['c.example.com/z'],
        '$deleteFromPrimitiveList/finalizers': ['b.example.com/y'],
      },
    },
    changed(pod, (o) => (at(o, 'metadata').finalizers = ['c.example.com/z', 'a.example.com/x'])),
  ],
  [
    '$setElementOrder reorders a merge list of maps without changing its items',
    POD,
    pod(),
    { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } },
    changed(pod, (o) => {
      const [app, sidecar] = at(o, 'spec').containers as Obj[]
      at(o, 'spec').containers = [sidecar, app]
    }),
  ],
  [
    '$setElementOrder places an added item where the directive lists it',
    POD,
    pod(),
    {
      spec: {
        containers: [{ name: 'app', '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }, { name: 'B' }], env: [{ name: 'C', value: '3' }] }],
      },
    },
    changed(pod, (o) => {
      at(o, 'spec.containers.0').env = [
        { name: 'A', value: '1' },
        { name: 'C', value: '3' },
        { name: 'B', value: '2' },
      ]
    }),
  ],
  [
    'volumes merge by name and $retainKeys swaps the volume source',
    POD,
    pod(),
    { spec: { volumes: [{ name: 'data', $retainKeys: ['hostPath', 'name'], hostPath: { path: '/srv' } }] } },
    changed(pod, (o) => {
      ;(at(o, 'spec').volumes as Obj[])[0] = { name: 'data', hostPath: { path: '/srv' } }
    }),
  ],
  [
    'deployment strategy with $retainKeys drops rollingUpdate when switching to Recreate',
    DEPLOYMENT,
    deployment(),
    { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
    changed(deployment, (o) => (at(o, 'spec').strategy = { type: 'Recreate' })),
  ],
  [
    'deployment strategy without $retainKeys merges',
    DEPLOYMENT,
    deployment(),
    { spec: { strategy: { rollingUpdate: { maxSurge: 3 } } } },
    changed(deployment, (o) => (at(o, 'spec.strategy').rollingUpdate = { maxSurge: 3, maxUnavailable: 0 })),
  ],
  [
    'configmap data merges as a map',
    CONFIGMAP,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', b: '2' } },
    { data: { b: null, c: '3' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', c: '3' } },
  ],
  [
    'service ports merge by port',
    SERVICE,
    service(),
    { spec: { ports: [{ port: 80, targetPort: 9090 }] } },
    changed(service, (o) => (at(o, 'spec.ports.0').targetPort = 9090)),
  ],
  [
    'a raw field merges as a JSON merge patch, $ keys being data there',
    REVISION,
    { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, revision: 1, data: { a: { b: 1, c: 2 }, l: [1] } },
    { data: { a: { c: null, $patch: 'x' }, l: [2] } },
    { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, revision: 1, data: { a: { b: 1, $patch: 'x' }, l: [2] } },
  ],
  [
    'a $patch: delete at the top empties the object',
    CONFIGMAP,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
    { $patch: 'delete' },
    {},
  ],
]

describe('applyStrategicMergePatch', () => {
  for (const [name, type, original, patch, expected] of CASES) {
    it(name, () => {
      assert.deepEqual(applyStrategicMergePatch(original, patch, type), expected)
    })
  }

  it('applies the three-way patch kubectl apply sends', () => {
    const lastApplied = (image: string): string =>
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'app', image }] } })
    const live = changed(pod, (o) => {
      at(o, 'metadata').annotations = { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied('nginx:1') }
    })
    const patch = {
      metadata: {
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied('nginx:2') },
        labels: { tier: null },
      },
      spec: {
        '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
        containers: [
          {
            name: 'app',
            image: 'nginx:2',
            args: null,
            '$setElementOrder/env': [{ name: 'B' }, { name: 'A' }],
            env: [{ name: 'B', value: '3' }],
            '$setElementOrder/ports': [{ containerPort: 80 }],
            ports: [{ containerPort: 443, $patch: 'delete' }],
          },
        ],
      },
    }
    const result = applyStrategicMergePatch(live, patch, POD)
    const expected = changed(pod, (o) => {
      at(o, 'metadata').annotations = { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied('nginx:2') }
      at(o, 'metadata').labels = { app: 'web' }
      const app = at(o, 'spec.containers.0')
      app.image = 'nginx:2'
      delete app.args
      app.env = [
        { name: 'B', value: '3' },
        { name: 'A', value: '1' },
      ]
      app.ports = [{ containerPort: 80, protocol: 'TCP' }]
    })
    assert.deepEqual(result, expected)
  })

  it('leaves its inputs untouched', () => {
    const original = pod()
    const patch = {
      metadata: { labels: { app: null }, '$deleteFromPrimitiveList/finalizers': ['a.example.com/x'] },
      spec: { containers: [{ name: 'app', env: [{ name: 'A', $patch: 'delete' }] }], volumes: [{ name: 'x', $retainKeys: ['name'] }] },
    }
    const originalCopy = structuredClone(original)
    const patchCopy = structuredClone(patch)
    const result = applyStrategicMergePatch(original, patch, POD)
    assert.deepEqual(original, originalCopy)
    assert.deepEqual(patch, patchCopy)
    assert.notEqual(result, original)
  })
})

/** name, type, original, patch, expected kind, expected message */
const ERRORS: Array<[string, string, Obj, Obj, PatchErrorKind, string]> = [
  [
    'a merge-list item without its merge key',
    POD,
    pod(),
    { spec: { containers: [{ image: 'x' }] } },
    'Internal',
    'map: map[image:x] does not contain declared merge key: name',
  ],
  [
    'a service port without its merge key',
    SERVICE,
    service(),
    { spec: { ports: [{ targetPort: 8080 }] } },
    'Internal',
    'map: map[targetPort:8080] does not contain declared merge key: port',
  ],
  [
    'a $patch: delete item without the merge key',
    POD,
    pod(),
    { spec: { containers: [{ $patch: 'delete' }] } },
    'Internal',
    'map: map[$patch:delete] does not contain declared merge key: name',
  ],
  [
    'an unknown $patch value on a map',
    POD,
    pod(),
    { metadata: { labels: { $patch: 'bogus', app: 'x' } } },
    'Internal',
    'unknown patch type: bogus in map: map[$patch:bogus app:x]',
  ],
  [
    '$patch: merge on a map, which upstream refuses too',
    POD,
    pod(),
    { metadata: { labels: { $patch: 'merge' } } },
    'Internal',
    'unknown patch type: merge in map: map[$patch:merge]',
  ],
  [
    '$patch: merge in a list',
    POD,
    pod(),
    { spec: { containers: [{ $patch: 'merge' }] } },
    'Internal',
    'merging lists cannot yet be specified in the patch',
  ],
  [
    'an unknown $patch value in a list item',
    POD,
    pod(),
    { spec: { containers: [{ name: 'app', $patch: 'keep' }] } },
    'Internal',
    'unknown patch type: keep in map: map[$patch:keep name:app]',
  ],
  [
    '$retainKeys that does not list a key the patch sets',
    DEPLOYMENT,
    deployment(),
    { spec: { strategy: { $retainKeys: ['type'], type: 'RollingUpdate', rollingUpdate: { maxSurge: 2 } } } },
    'BadRequest',
    'invalid patch format of retainKeys',
  ],
  [
    '$retainKeys that is not a list',
    DEPLOYMENT,
    deployment(),
    { spec: { strategy: { $retainKeys: 'type' } } },
    'BadRequest',
    'invalid patch format of retainKeys',
  ],
  [
    'a $deleteFromPrimitiveList key without a list name',
    POD,
    pod(),
    { metadata: { $deleteFromPrimitiveListfinalizers: ['a'] } },
    'BadRequest',
    'invalid patch format of primitive list',
  ],
  [
    'a $setElementOrder key without a list name',
    POD,
    pod(),
    { spec: { $setElementOrdercontainers: [{ name: 'app' }] } },
    'BadRequest',
    'invalid patch format of setElementOrder list',
  ],
  [
    'a $setElementOrder that is not a list',
    POD,
    pod(),
    { spec: { '$setElementOrder/containers': { name: 'app' } } },
    'Internal',
    'expected a []interface {}, but received a map[string]interface {}',
  ],
  [
    'a patch list in another order than $setElementOrder',
    POD,
    pod(),
    {
      spec: {
        '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
        containers: [{ name: 'sidecar', image: 'b' }, { name: 'app', image: 'a' }],
      },
    },
    'Internal',
    "the order in patch list:\n[map[image:b name:sidecar] map[image:a name:app]]\n doesn't match $setElementOrder list:\n[map[name:app] map[name:sidecar]]",
  ],
  [
    'a list of lists',
    POD,
    changed(pod, (o) => (at(o, 'metadata').finalizers = [])),
    { metadata: { finalizers: [['x']] } },
    'Unprocessable',
    'lists of lists are not supported',
  ],
  [
    'a merge list mixing strings and numbers',
    POD,
    pod(),
    { metadata: { finalizers: [1] } },
    'Internal',
    'list element types are not identical: [[a.example.com/x b.example.com/y] [1]]',
  ],
  [
    'a list given where a struct belongs',
    POD,
    pod(),
    { spec: [] },
    'Invalid',
    ' "" is invalid: patch: Invalid value: "map[spec:[]]": cannot restore struct from: slice',
  ],
  [
    'a list given where a map belongs',
    POD,
    pod(),
    { metadata: { labels: ['a'] } },
    'Invalid',
    ' "" is invalid: patch: Invalid value: "map[metadata:map[labels:[a]]]": cannot restore map from slice',
  ],
  [
    'a map given where a list belongs',
    POD,
    pod(),
    { spec: { containers: { name: 'app' } } },
    'Invalid',
    ' "" is invalid: patch: Invalid value: "map[spec:map[containers:map[name:app]]]": cannot restore slice from map',
  ],
  [
    'a string given where a struct belongs',
    DEPLOYMENT,
    deployment(),
    { spec: { template: 'x' } },
    'Invalid',
    ' "" is invalid: patch: Invalid value: "map[spec:map[template:x]]": cannot restore struct from: string',
  ],
]

describe('applyStrategicMergePatch errors', () => {
  for (const [name, type, original, patch, kind, message] of ERRORS) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => applyStrategicMergePatch(original, patch, type),
        (err: unknown) => {
          assert.ok(err instanceof PatchError, String(err))
          assert.equal(err.message, message)
          assert.equal(err.kind, kind)
          return true
        },
      )
    })
  }

  it('reports a result that does not fit its type as a cause on the field patch', () => {
    assert.throws(
      () => applyStrategicMergePatch(pod(), { spec: [] }, POD),
      (err: unknown) => {
        assert.ok(err instanceof PatchError)
        assert.deepEqual(err.causes, [
          { type: 'FieldValueInvalid', field: 'patch', value: 'map[spec:[]]', detail: 'cannot restore struct from: slice' },
        ])
        return true
      },
    )
  })
})
