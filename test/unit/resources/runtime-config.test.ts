/**
 * `--runtime-config` over the built-in catalogue: turning group/versions and
 * single resources off and on with upstream's keys, and the keys upstream
 * refuses, each refused naming the key.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { apiGroupList, apiResourceList } from '../../../core/api/discovery.js'
import { builtinEntries } from '../../../core/resources/builtin.js'
import { Catalogue, type ResourceEntry } from '../../../core/resources/catalogue.js'
import { applyRuntimeConfig, RuntimeConfigError } from '../../../core/resources/runtime-config.js'

const entries = builtinEntries(async () => ({ allowed: true }))
const served = (runtimeConfig: Record<string, boolean>) => new Catalogue(applyRuntimeConfig(entries, runtimeConfig))
const gvr = (e: ResourceEntry) => `${e.group}/${e.version}/${e.resource}`

function refusal(runtimeConfig: Record<string, boolean>): RuntimeConfigError {
  try {
    applyRuntimeConfig(entries, runtimeConfig)
  } catch (err) {
    assert.ok(err instanceof RuntimeConfigError, String(err))
    return err
  }
  assert.fail('the runtime config was accepted')
}

describe('--runtime-config', () => {
  it('serves every built-in group/version but the alpha ones when empty', () => {
    assert.equal(applyRuntimeConfig(entries, {}).length, entries.filter((e) => !e.offByDefault).length)
    assert.ok(entries.some((e) => e.offByDefault))
  })

  it('serves an alpha group/version only when a key turns it on', () => {
    assert.equal(served({}).lookup('coordination.k8s.io', 'v1alpha2', 'leasecandidates'), undefined)
    assert.ok(served({ 'coordination.k8s.io/v1alpha2': true }).lookup('coordination.k8s.io', 'v1alpha2', 'leasecandidates'))
    assert.ok(served({ 'api/alpha': true }).lookup('coordination.k8s.io', 'v1alpha2', 'leasecandidates'))
    assert.ok(served({ 'coordination.k8s.io/v1alpha2/leasecandidates': true }).lookup('coordination.k8s.io', 'v1alpha2', 'leasecandidates'))
    assert.equal(served({ 'api/all': true, 'coordination.k8s.io/v1alpha2': false }).lookup('coordination.k8s.io', 'v1alpha2', 'leasecandidates'), undefined)
  })

  it('disables a group/version, which then leaves discovery', () => {
    const catalogue = served({ 'batch/v1': false })
    assert.equal(catalogue.lookup('batch', 'v1', 'jobs'), undefined)
    assert.ok(!apiGroupList(catalogue).groups.some((g) => g.name === 'batch'))
    assert.ok(catalogue.lookup('apps', 'v1', 'deployments'))
  })

  it('disables one version of a group and keeps the other preferred', () => {
    const catalogue = served({ 'autoscaling/v2': false })
    const group = apiGroupList(catalogue).groups.find((g) => g.name === 'autoscaling')!
    assert.deepEqual(group.preferredVersion, { groupVersion: 'autoscaling/v1', version: 'v1' })
  })

  it('turns single resources off, including core ones written as v1/<resource>', () => {
    const catalogue = served({ 'apps/v1/daemonsets': false, 'v1/podtemplates': false })
    assert.equal(catalogue.lookup('apps', 'v1', 'daemonsets'), undefined)
    assert.ok(catalogue.lookup('apps', 'v1', 'deployments'))
    assert.ok(!apiResourceList(catalogue, '', 'v1')!.resources.some((r) => r['name'] === 'podtemplates'))
  })

  it('lets the most specific key win: api/all=false with the core group and one resource back on', () => {
    const catalogue = served({ 'api/all': false, v1: true, 'apps/v1/deployments': true })
    assert.deepEqual(
      catalogue.entries.filter((e) => e.group !== '').map(gvr),
      ['apps/v1/deployments'],
    )
    assert.ok(catalogue.lookup('', 'v1', 'pods'))
  })

  it('reads api/v1 as the core group and ignores api/legacy, as upstream does', () => {
    const catalogue = served({ 'api/ga': false, 'api/v1': true, 'api/legacy': false })
    assert.deepEqual(catalogue.groupVersions(), [{ group: '', version: 'v1' }])
  })

  it('has nothing to add for api/beta and api/alpha: only GA versions are built in', () => {
    assert.equal(applyRuntimeConfig(entries, { 'api/beta': true, 'api/alpha': true }).length, entries.length)
  })

  it('refuses api/all=false on its own', () => {
    const err = refusal({ 'api/all': false })
    assert.equal(err.key, 'api/all')
    assert.equal(err.message, '--runtime-config: invalid key with only api/all=false')
  })

  it('refuses to disable the core group', () => {
    assert.equal(refusal({ v1: false }).message, '--runtime-config: the core group version v1 cannot be disabled (v1=false)')
    assert.equal(refusal({ 'api/all': false, 'apps/v1': true }).key, 'api/all')
  })

  it('refuses unknown groups, unregistered versions, odd keys and capitalized resources', () => {
    assert.equal(refusal({ 'example.com/v1': true }).message, '--runtime-config: unknown api groups example.com')
    assert.equal(refusal({ 'apps/v1beta1': true }).message, '--runtime-config: group version apps/v1beta1 that has not been registered')
    assert.equal(refusal({ 'apps/v1/deployments/scale': false }).message, '--runtime-config: invalid key apps/v1/deployments/scale')
    assert.equal(
      refusal({ 'apps/v1/Deployments': false }).message,
      '--runtime-config: invalid key apps/v1/Deployments: group/version/resource and resource is always lowercase plural, not "Deployments"',
    )
  })
})
