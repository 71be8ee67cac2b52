/**
 * A root CA, an intermediate CA it signs, and a client certificate the
 * intermediate signs, made with the openssl command line: the shape of a
 * real PKI where clients send their intermediate along with their leaf.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface ChainedClient {
  /** The root CA certificate (PEM): what the server trusts. */
  root: string
  /** The leaf followed by the intermediate (PEM): what the client presents. */
  certificateChain: string
  privateKey: string
}

export function clientCertificateViaIntermediate(commonName: string, organization: string): ChainedClient {
  const dir = mkdtempSync(join(tmpdir(), 'chain-'))
  const at = (name: string) => join(dir, name)
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
  try {
    writeFileSync(at('ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign,digitalSignature\n')
    writeFileSync(at('leaf.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n')
    for (const key of ['root', 'intermediate', 'leaf']) openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', at(`${key}.key`))
    openssl('req', '-x509', '-new', '-key', at('root.key'), '-subj', '/CN=chain-root', '-days', '2', '-out', at('root.crt'), '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
    openssl('req', '-new', '-key', at('intermediate.key'), '-subj', '/CN=chain-intermediate', '-out', at('intermediate.csr'))
    openssl('x509', '-req', '-in', at('intermediate.csr'), '-CA', at('root.crt'), '-CAkey', at('root.key'), '-CAcreateserial', '-days', '2', '-extfile', at('ca.ext'), '-out', at('intermediate.crt'))
    openssl('req', '-new', '-key', at('leaf.key'), '-subj', `/O=${organization}/CN=${commonName}`, '-out', at('leaf.csr'))
    openssl('x509', '-req', '-in', at('leaf.csr'), '-CA', at('intermediate.crt'), '-CAkey', at('intermediate.key'), '-CAcreateserial', '-days', '2', '-extfile', at('leaf.ext'), '-out', at('leaf.crt'))
    const read = (name: string) => readFileSync(at(name), 'utf8')
    return { root: read('root.crt'), certificateChain: read('leaf.crt') + read('intermediate.crt'), privateKey: read('leaf.key') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * An attacker's "intermediate": it copies the subject and key id of
 * `impersonated` (a CA the attacker's leaf really chains to) and names
 * `claimedIssuer` (a CA the attacker has no key of) as its issuer, by its
 * subject and key id, but is signed by a key of the attacker's own. A chain
 * matched by names and key ids runs leaf, this, `claimedIssuer`; no
 * signature on the second link holds.
 */
export function forgedIntermediate(impersonated: string, claimedIssuer: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'forged-'))
  const at = (name: string) => join(dir, name)
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString()
  try {
    writeFileSync(at('impersonated.crt'), impersonated)
    writeFileSync(at('claimed.crt'), claimedIssuer)
    const subjectOf = (file: string) => openssl('x509', '-in', at(file), '-noout', '-subject', '-nameopt', 'compat').trim().replace(/^subject=/, '')
    const keyIdOf = (file: string) => /Subject Key Identifier:\s*([0-9A-F:]+)/.exec(openssl('x509', '-in', at(file), '-noout', '-ext', 'subjectKeyIdentifier'))?.[1] ?? ''
    for (const key of ['attacker', 'forged']) openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', at(`${key}.key`))
    // A self-signed look-alike of the claimed issuer, on the attacker's key: it signs the forgery.
    openssl('req', '-x509', '-new', '-key', at('attacker.key'), '-subj', subjectOf('claimed.crt'), '-days', '2', '-out', at('lookalike.crt'),
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-addext', `subjectKeyIdentifier=${keyIdOf('claimed.crt')}`)
    writeFileSync(at('forged.ext'), `basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=${keyIdOf('impersonated.crt')}\nauthorityKeyIdentifier=keyid:always\n`)
    openssl('req', '-new', '-key', at('forged.key'), '-subj', subjectOf('impersonated.crt'), '-out', at('forged.csr'))
    openssl('x509', '-req', '-in', at('forged.csr'), '-CA', at('lookalike.crt'), '-CAkey', at('attacker.key'), '-CAcreateserial', '-days', '2', '-extfile', at('forged.ext'), '-out', at('forged.crt'))
    return readFileSync(at('forged.crt'), 'utf8')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
