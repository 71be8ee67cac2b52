/**
 * The built-in catalogue as kubectl sees it against the daemon: the
 * resources `kubectl api-resources` lists, `kubectl explain` reading the
 * OpenAPI documents, typed commands sent as protobuf, and the columns
 * `kubectl get` prints for each kind.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type ApiResourceRow, upstreamApiResources } from '../unit/resources/upstream-api-resources.js'
import { Daemon } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

/** The header line of a table, its columns separated by runs of spaces. */
function header(table: string): string[] {
  return (table.split('\n')[0] ?? '').trim().split(/\s{2,}/)
}

describe('kubectl and the built-in catalogue', () => {
  it('api-resources lists every resource an upstream cluster lists', async () => {
    const lines = (await ok('api-resources', '--no-headers')).trim().split('\n')
    const rows: ApiResourceRow[] = lines.map((line) => {
      const parts = line.trim().split(/\s+/)
      const [name = '', ...rest] = parts
      const [shortNames = '', apiVersion = '', namespaced = '', kind = ''] = rest.length === 4 ? rest : ['', ...rest]
      return { name, shortNames, apiVersion, namespaced, kind }
    })
    const key = (r: ApiResourceRow) => `${r.apiVersion} ${r.name}`
    const sort = (list: ApiResourceRow[]) => [...list].sort((a, b) => (key(a) < key(b) ? -1 : 1))
    assert.deepEqual(sort(rows), sort(upstreamApiResources()))
  })

  it('explains a field from the OpenAPI document', async () => {
    const out = await ok('explain', 'deployment.spec.replicas')
    assert.match(out, /^GROUP:\s+apps$/m)
    assert.match(out, /^KIND:\s+Deployment$/m)
    assert.match(out, /^FIELD: replicas <integer>$/m)
    assert.match(await ok('explain', 'pods.spec.containers.livenessProbe.httpGet'), /^FIELD: httpGet <HTTPGetAction>$/m)
  })

  it('creates with typed commands and prints pods, deployments and services with upstream’s columns', async () => {
    assert.equal(await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2'), 'deployment.apps/web created\n')
    assert.equal(await ok('create', 'service', 'clusterip', 'web', '--tcp=80:8080'), 'service/web created\n')
    assert.equal(await ok('run', 'tool', '--image=busybox', '--labels=app=tool'), 'pod/tool created\n')
    const out = await ok('get', 'pods,deployments,services')
    const tables = out.trim().split('\n\n')
    assert.deepEqual(header(tables[0]!), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'])
    assert.deepEqual(header(tables[1]!), ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'])
    assert.match(tables[1]!, /^deployment\.apps\/web\s+0\/2\s+0\s+0\s+\d+s$/m)
    assert.deepEqual(header(tables[2]!), ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'])
    assert.match(tables[2]!, /^service\/web\s+ClusterIP\s+10\.0\.0\.\d+\s+<none>\s+80\/TCP\s+\d+s$/m)
    assert.deepEqual(header(await ok('get', 'pods', '-o', 'wide')), [
      'NAME',
      'READY',
      'STATUS',
      'RESTARTS',
      'AGE',
      'IP',
      'NODE',
      'NOMINATED NODE',
      'READINESS GATES',
    ])
    assert.deepEqual(header(await ok('get', 'deployments', '-o', 'wide')), [
      'NAME',
      'READY',
      'UP-TO-DATE',
      'AVAILABLE',
      'AGE',
      'CONTAINERS',
      'IMAGES',
      'SELECTOR',
    ])
  })

  it('creates a manifest of several kinds, validated against the schemas', async () => {
    const file = join(d.dir, 'mixed.yaml')
    writeFileSync(
      file,
      [
        'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox',
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\nrules:\n- apiGroups: [""]\n  resources: [pods]\n  verbs: [get, list]',
        'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 4\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}',
      ].join('\n---\n'),
    )
    assert.equal(
      await ok('create', '-f', file),
      'job.batch/once created\nrole.rbac.authorization.k8s.io/reader created\nhorizontalpodautoscaler.autoscaling/web created\n',
    )
    assert.deepEqual(header(await ok('get', 'jobs')), ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE'])
    assert.deepEqual(header(await ok('get', 'roles')), ['NAME', 'CREATED AT'])
    const hpa = await ok('get', 'hpa')
    assert.deepEqual(header(hpa), ['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE'])
    assert.match(hpa, /^web\s+Deployment\/web\s+cpu: <unknown>\/70%\s+1\s+4\s+0\s+\d+s$/m)
    assert.match(await ok('get', 'horizontalpodautoscalers.v1.autoscaling', 'web', '-o', 'jsonpath={.spec.targetCPUUtilizationPercentage}'), /^70$/)
  })

  it('refuses a manifest whose field has the wrong type, in upstream words', async () => {
    const file = join(d.dir, 'bad.yaml')
    writeFileSync(file, 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  replicas: many\n')
    const r = await d.kubectl('create', '-f', file, '--validate=false')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /cannot unmarshal string into Go struct field DeploymentSpec\.spec\.replicas of type int32/)
  })
})
