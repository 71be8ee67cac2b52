/** Client certificates verified by the transport: CN is the user name, O the groups. */
import type { Authenticator } from './authenticator.js'

export const x509Authenticator: Authenticator = {
  authenticate(_request, connection) {
    const cert = connection.clientCertificate
    if (!cert) return undefined
    if (!cert.verified) return { error: `verifying certificate failed: ${cert.verifyError ?? 'unknown authority'}` }
    if (!cert.commonName) return { error: 'certificate has no common name' }
    return { user: { username: cert.commonName, groups: [...cert.organizations] } }
  },
}
