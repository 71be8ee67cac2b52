/**
 * storageVersionHash as upstream computes it: the values an upstream server
 * shows for the same resources (its integration test data), for every
 * built-in resource both serve, the other versions of a resource sharing
 * their storage version's hash, and none for what is not stored.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StorageVersionHashes, storageKindOf, storageVersionHash } from '../../../core/api/storage-version-hash.js'
import { builtinEntries } from '../../../core/resources/builtin.js'
import { Catalogue, groupVersion } from '../../../core/resources/catalogue.js'

/**
 * What upstream's discovery shows, by group/version/resource. IP addresses
 * and service CIDRs are left out: upstream kept them in their v1beta1 form
 * for a release after v1 was served, and here they are stored as v1 (their
 * hash is that of networking.k8s.io/v1, checked below).
 */
const UPSTREAM: Readonly<Record<string, string>> = {
  'v1/configmaps': 'qFsyl6wFWjQ=',
  'v1/endpoints': 'fWeeMqaN/OA=',
  'v1/events': 'r2yiGXH7wu8=',
  'v1/limitranges': 'EBKMFVe6cwo=',
  'v1/namespaces': 'Q3oi5N2YM8M=',
  'v1/nodes': 'XwShjMxG9Fs=',
  'v1/persistentvolumeclaims': 'QWTyNDq0dC4=',
  'v1/persistentvolumes': 'HN/zwEC+JgM=',
  'v1/pods': 'xPOwRZ+Yhw8=',
  'v1/podtemplates': 'LIXB2x4IFpk=',
  'v1/replicationcontrollers': 'Jond2If31h0=',
  'v1/resourcequotas': '8uhSgffRX6w=',
  'v1/secrets': 'S6u1pOWzb84=',
  'v1/serviceaccounts': 'pbx9ZvyFpBE=',
  'v1/services': '0/CO1lhkEBI=',
  'autoscaling/v1/horizontalpodautoscalers': 'qwQve8ut294=',
  'autoscaling/v2/horizontalpodautoscalers': 'qwQve8ut294=',
  'batch/v1/jobs': 'mudhfqk/qZY=',
  'batch/v1/cronjobs': 'sd5LIXh4Fjs=',
  'certificates.k8s.io/v1/certificatesigningrequests': '95fRKMXA+00=',
  'coordination.k8s.io/v1/leases': 'gqkMMb/YqFM=',
  'discovery.k8s.io/v1/endpointslices': 'qgS0xkrxYAI=',
  'networking.k8s.io/v1/networkpolicies': 'YpfwF18m1G8=',
  'networking.k8s.io/v1/ingresses': '39NQlfNR+bo=',
  'networking.k8s.io/v1/ingressclasses': 'l/iqIbDgFyQ=',
  'node.k8s.io/v1/runtimeclasses': 'WQTu1GL3T2Q=',
  'policy/v1/poddisruptionbudgets': 'EVWiDmWqyJw=',
  'rbac.authorization.k8s.io/v1/clusterrolebindings': '48tpQ8gZHFc=',
  'rbac.authorization.k8s.io/v1/clusterroles': 'bYE5ZWDrJ44=',
  'rbac.authorization.k8s.io/v1/rolebindings': 'eGsCzGH6b1g=',
  'rbac.authorization.k8s.io/v1/roles': '7FuwZcIIItM=',
  'scheduling.k8s.io/v1/priorityclasses': '1QwjyaZjj3Y=',
  'storage.k8s.io/v1/csidrivers': 'hL6j/rwBV5w=',
  'storage.k8s.io/v1/csinodes': 'Pe62DkZtjuo=',
  'storage.k8s.io/v1/storageclasses': 'K+m6uJwbjGY=',
  'storage.k8s.io/v1/csistoragecapacities': 'xeVl+2Ly1kE=',
  'storage.k8s.io/v1/volumeattachments': 'tJx/ezt6UDU=',
  'apps/v1/controllerrevisions': '85nkx63pcBU=',
  'apps/v1/daemonsets': 'dd7pWHUlMKQ=',
  'apps/v1/deployments': '8aSe+NMegvE=',
  'apps/v1/replicasets': 'P1RzHs8/mWQ=',
  'apps/v1/statefulsets': 'H+vl74LkKdo=',
  'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations': 'Sqi0GUgDaX0=',
  'admissionregistration.k8s.io/v1/validatingwebhookconfigurations': 'B0wHjQmsGNk=',
  'admissionregistration.k8s.io/v1/validatingadmissionpolicies': '6OxvlMmQ6is=',
  'admissionregistration.k8s.io/v1/validatingadmissionpolicybindings': 'v9715VZqakg=',
  'events.k8s.io/v1/events': 'r2yiGXH7wu8=',
  'flowcontrol.apiserver.k8s.io/v1/flowschemas': 'GJVAJZSZBIw=',
  'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations': 'Kir5PVfvNeI=',
}

/** What upstream serves without storage, so without a hash. */
const UNSTORED = [
  'v1/bindings',
  'v1/componentstatuses',
  'authentication.k8s.io/v1/selfsubjectreviews',
  'authentication.k8s.io/v1/tokenreviews',
  'authorization.k8s.io/v1/localsubjectaccessreviews',
  'authorization.k8s.io/v1/selfsubjectaccessreviews',
  'authorization.k8s.io/v1/selfsubjectrulesreviews',
  'authorization.k8s.io/v1/subjectaccessreviews',
]

const catalogue = new Catalogue(builtinEntries(async () => ({ allowed: true })))
const gvr = (e: { group: string; version: string; resource: string }) => `${groupVersion(e)}/${e.resource}`

describe('storageVersionHash', () => {
  it('is base64 of the first 8 bytes of the SHA-256 of group/version/kind', async () => {
    assert.equal(await storageVersionHash({ group: '', version: 'v1', kind: 'Pod' }), 'xPOwRZ+Yhw8=')
    assert.equal(await storageVersionHash({ group: 'apps', version: 'v1', kind: 'Deployment' }), '8aSe+NMegvE=')
  })

  it('matches upstream for every built-in resource upstream lists, other versions sharing the storage version', async () => {
    const hashes = await new StorageVersionHashes(catalogue).hashes()
    const mine: Record<string, string | undefined> = {}
    for (const e of catalogue.entries) if (UPSTREAM[gvr(e)] !== undefined) mine[gvr(e)] = hashes.get(e)
    assert.deepEqual(mine, UPSTREAM)
  })

  it('hashes the version a resource is stored in here', async () => {
    const hashes = await new StorageVersionHashes(catalogue).hashes()
    assert.equal(hashes.get(catalogue.lookup('networking.k8s.io', 'v1', 'ipaddresses')!), '3f/plJFChNE=')
    assert.equal(hashes.get(catalogue.lookup('networking.k8s.io', 'v1', 'servicecidrs')!), 'gNLvruQhW2g=')
  })

  it('gives none to what upstream does not store', async () => {
    const hashes = await new StorageVersionHashes(catalogue).hashes()
    for (const path of UNSTORED) {
      const entry = catalogue.entries.find((e) => gvr(e) === path)
      assert.ok(entry, path)
      assert.equal(storageKindOf(entry), undefined, path)
      assert.equal(hashes.has(entry), false, path)
    }
  })

  it('works the hashes out again only when the catalogue changed', async () => {
    const changing = new Catalogue(builtinEntries(async () => ({ allowed: true })))
    const hashes = new StorageVersionHashes(changing)
    const first = hashes.hashes()
    assert.equal(hashes.hashes(), first, 'the same answer while nothing changed')
    const pods = changing.lookup('', 'v1', 'pods')!
    changing.replace([pods], [])
    const second = await hashes.hashes()
    assert.notEqual(second, await first)
    assert.equal(second.has(pods), false)
  })
})
