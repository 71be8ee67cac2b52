/** Admission attributes for the plugin tables: a request on `entry` by `user`, nothing else set. */
import assert from 'node:assert/strict'
import { StatusError } from '../../../core/machinery/status-error.js'
import type { AdmissionAttributes } from '../../../core/admission/attributes.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject, UserInfo } from '../../../core/machinery/object.js'

export const ADMIN: UserInfo = { username: 'admin', groups: ['system:masters'] }

export function attributes(entry: ResourceEntry, fields: Partial<AdmissionAttributes> & { object?: KubeObject }): AdmissionAttributes {
  return {
    operation: 'CREATE',
    entry,
    namespace: entry.namespaced ? 'default' : '',
    name: fields.object?.metadata.name ?? '',
    dryRun: false,
    user: ADMIN,
    warnings: [],
    ...fields,
  }
}

/** The message of the 403 Forbidden `run` refuses with; fails when it admits. */
export async function forbiddenMessage(run: () => void | Promise<void>): Promise<string> {
  try {
    await run()
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err))
    assert.equal(err.code, 403)
    assert.equal(err.reason, 'Forbidden')
    return err.message
  }
  return assert.fail('expected a 403 refusal')
}
