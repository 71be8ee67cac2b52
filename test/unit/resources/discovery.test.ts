/**
 * What discovery says about the built-in catalogue: the same resources,
 * short names, scopes and kinds `kubectl api-resources` lists on an upstream
 * cluster, the verbs and categories kubectl relies on, and the preferred
 * version of each group.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { aggregatedDiscovery, apiGroupDocument, apiGroupList, apiResourceList } from '../../../core/api/discovery.js'
import { builtinEntries } from '../../../core/resources/builtin.js'
import { Catalogue } from '../../../core/resources/catalogue.js'
import { type ApiResourceRow as Row, upstreamApiResources } from './upstream-api-resources.js'

const catalogue = new Catalogue(builtinEntries(async () => ({ allowed: true })))

/** What kubectl api-resources builds from discovery: the preferred version of each group. */
function discoveredRows(): Row[] {
  const groupVersions = ['v1', ...apiGroupList(catalogue).groups.map((g) => g.preferredVersion!.groupVersion)]
  const rows: Row[] = []
  for (const gv of groupVersions) {
    const [group, version] = gv.includes('/') ? gv.split('/') : ['', gv]
    for (const r of apiResourceList(catalogue, group!, version!)!.resources) {
      if (String(r['name']).includes('/')) continue
      rows.push({
        name: String(r['name']),
        shortNames: ((r['shortNames'] as string[] | undefined) ?? []).join(','),
        apiVersion: gv,
        namespaced: String(r['namespaced']),
        kind: String(r['kind']),
      })
    }
  }
  return rows
}

const key = (r: Row) => `${r.apiVersion} ${r.name}`

describe('discovery of the built-in catalogue', () => {
  it('lists every resource kubectl api-resources lists upstream, with short names, scope and kind', () => {
    const sort = (rows: Row[]) => rows.sort((a, b) => (key(a) < key(b) ? -1 : 1))
    assert.deepEqual(sort(discoveredRows()), sort(upstreamApiResources()))
  })

  it('gives kubectl the verbs and categories it relies on', () => {
    const pods = apiResourceList(catalogue, '', 'v1')!.resources.find((r) => r['name'] === 'pods')!
    assert.deepEqual(pods, {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
    })
    const namespaces = apiResourceList(catalogue, '', 'v1')!.resources.find((r) => r['name'] === 'namespaces')!
    assert.deepEqual(namespaces['verbs'], ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'])
    const crds = apiResourceList(catalogue, 'apiextensions.k8s.io', 'v1')!.resources.find((r) => r['name'] === 'customresourcedefinitions')!
    assert.deepEqual(crds['categories'], ['api-extensions'])
    const reviews = apiResourceList(catalogue, 'authorization.k8s.io', 'v1')!.resources
    for (const r of reviews) assert.deepEqual(r['verbs'], ['create'], String(r['name']))
    const all = catalogue.entries.filter((e) => e.categories?.includes('all')).map((e) => `${e.resource}.${e.group}`)
    assert.deepEqual(all.sort(), [
      'cronjobs.batch',
      'daemonsets.apps',
      'deployments.apps',
      'horizontalpodautoscalers.autoscaling',
      'horizontalpodautoscalers.autoscaling',
      'jobs.batch',
      'pods.',
      'replicasets.apps',
      'replicationcontrollers.',
      'services.',
      'statefulsets.apps',
    ])
  })

  it('lists subresources with the kind they answer, in another group where upstream says so', () => {
    const names = (group: string, resource: string) =>
      apiResourceList(catalogue, group, 'v1')!
        .resources.filter((r) => String(r['name']).startsWith(`${resource}/`))
        .map((r) => r['name'])
    assert.deepEqual(names('', 'pods'), [
      'pods/attach',
      'pods/binding',
      'pods/ephemeralcontainers',
      'pods/eviction',
      'pods/exec',
      'pods/log',
      'pods/portforward',
      'pods/proxy',
      'pods/resize',
      'pods/status',
    ])
    const scale = apiResourceList(catalogue, 'apps', 'v1')!.resources.find((r) => r['name'] === 'deployments/scale')
    assert.deepEqual(scale, {
      name: 'deployments/scale',
      singularName: '',
      namespaced: true,
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
      group: 'autoscaling',
      version: 'v1',
    })
    const eviction = apiResourceList(catalogue, '', 'v1')!.resources.find((r) => r['name'] === 'pods/eviction')
    assert.equal(eviction?.['group'], 'policy')
    assert.deepEqual(names('', 'namespaces'), ['namespaces/finalize', 'namespaces/status'])
  })

  it('prefers autoscaling/v2 and lists it first, v1 still served', () => {
    const group = apiGroupDocument(catalogue, 'autoscaling')!
    assert.deepEqual(group.preferredVersion, { groupVersion: 'autoscaling/v2', version: 'v2' })
    assert.deepEqual(
      group.versions.map((v) => v.version),
      ['v2', 'v1'],
    )
    const aggregated = aggregatedDiscovery(catalogue, false)
    const autoscaling = aggregated.items.find((i) => i.metadata.name === 'autoscaling')!
    assert.deepEqual(
      autoscaling.versions.map((v) => v.version),
      ['v2', 'v1'],
    )
  })

  it('sorts each group version’s resources by name, as upstream does', () => {
    const names = apiResourceList(catalogue, 'apps', 'v1')!
      .resources.map((r) => String(r['name']))
      .filter((n) => !n.includes('/'))
    assert.deepEqual(names, ['controllerrevisions', 'daemonsets', 'deployments', 'replicasets', 'statefulsets'])
  })
})
