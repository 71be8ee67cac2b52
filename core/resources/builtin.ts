/** The built-in catalogue: every resource this server serves, in discovery order. */
import type { AccessDecider } from './reviews.js'
import { selfSubjectAccessReviews, selfSubjectReviews } from './reviews.js'
import type { ResourceEntry } from './catalogue.js'
import { configMaps } from './core/configmaps.js'
import { namespaces } from './core/namespaces.js'
import { secrets } from './core/secrets.js'
import { serviceAccounts } from './core/serviceaccounts.js'

export function builtinEntries(decide: AccessDecider): ResourceEntry[] {
  return [namespaces, configMaps, secrets, serviceAccounts, selfSubjectReviews, selfSubjectAccessReviews(decide)]
}
