/**
 * The validating phase hands plugins a copy of the object, made when a
 * plugin first reads it: a plugin that does not apply to a resource must not
 * read it, or every create of a large object pays for a copy of it.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AdmissionAttributes } from '../../../core/admission/attributes.js'
import type { ValidatingAdmission } from '../../../core/admission/validating.js'
import { certificateSubjectRestriction } from '../../../core/admission/builtin/certificate-subject-restriction.js'
import { clusterTrustBundleAttest } from '../../../core/admission/builtin/cluster-trust-bundle-attest.js'
import { runtimeClassAdmission } from '../../../core/admission/builtin/runtime-class.js'
import { resourceQuotaAdmission } from '../../../core/admission/quota/admission.js'
import { configMaps } from '../../../core/resources/core/configmaps.js'
import { alwaysAllow } from '../../../core/authz/authorizer.js'
import { attrs } from './attributes.js'

/** A ConfigMap create whose object counts its reads. */
function counted(): { a: AdmissionAttributes; reads: () => number } {
  const a = attrs(configMaps, 'CREATE', { metadata: { name: 'big', namespace: 'default' }, data: { k: 'v' } })
  const object = a.object
  let reads = 0
  Object.defineProperty(a, 'object', { enumerable: true, get: () => (reads++, object) })
  return { a, reads: () => reads }
}

const plugins: Record<string, ValidatingAdmission> = {
  RuntimeClass: runtimeClassAdmission(async () => undefined),
  CertificateSubjectRestriction: certificateSubjectRestriction,
  ClusterTrustBundleAttest: clusterTrustBundleAttest(alwaysAllow, true),
  'ResourceQuota without quotas': resourceQuotaAdmission({ quotas: () => [], updateQuota: async () => undefined }, { limitedResources: [] }, () => new Date()),
}

describe('validating plugins that do not apply leave the object unread', () => {
  for (const [name, plugin] of Object.entries(plugins)) {
    it(name, async () => {
      const { a, reads } = counted()
      await plugin.validate(a)
      assert.equal(reads(), 0)
    })
  }
})
