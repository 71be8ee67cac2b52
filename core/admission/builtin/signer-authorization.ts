/**
 * Whether a user may `approve`, `sign` or `attest` for a signer name: the
 * synthetic resource `signers` of certificates.k8s.io, by the signer's name
 * or by its domain and `/*` (`example.com/*` covers every signer of
 * example.com), as upstream's certificate plugins ask.
 */
import type { Authorizer } from '../../authz/authorizer.js'
import type { UserInfo } from '../../machinery/object.js'

async function allowed(authorizer: Authorizer, user: UserInfo, verb: string, name: string): Promise<boolean> {
  try {
    const decision = await authorizer.authorize({
      user,
      verb,
      isResourceRequest: true,
      path: '',
      namespace: '',
      apiGroup: 'certificates.k8s.io',
      apiVersion: '*',
      resource: 'signers',
      subresource: '',
      name,
    })
    return decision.decision === 'allow'
  } catch {
    // An authorizer that fails grants nothing; the wildcard is still asked.
    return false
  }
}

export async function mayUseSigner(authorizer: Authorizer, user: UserInfo, verb: 'approve' | 'sign' | 'attest', signerName: string): Promise<boolean> {
  if (await allowed(authorizer, user, verb, signerName)) return true
  const domain = signerName.split('/')[0] ?? ''
  return allowed(authorizer, user, verb, `${domain}/*`)
}
