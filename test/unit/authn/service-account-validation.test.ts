import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { describe, it } from 'node:test'
import { boundTokenClaims, type TokenClaims } from '../../../core/authn/serviceaccount/claims.js'
import { jwtTokenAuthenticator, signToken } from '../../../core/authn/serviceaccount/jwt.js'
import { staticKeySet } from '../../../core/authn/serviceaccount/key-set.js'
import { loadSigningKey } from '../../../core/authn/serviceaccount/keys.js'
import { boundTokenValidator, type TokenObjects } from '../../../core/authn/serviceaccount/validators.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const NOW = new Date('2030-01-01T00:00:00Z')
const obj = (name: string, uid: string, deletionTimestamp?: string): KubeObject => ({ metadata: { name, uid, ...(deletionTimestamp ? { deletionTimestamp } : {}) } }) as KubeObject

function objects(overrides: Partial<Record<'sa' | 'pod' | 'node', KubeObject | undefined>> = {}): TokenObjects {
  const has = (k: 'sa' | 'pod' | 'node', fallback: KubeObject) => (k in overrides ? overrides[k] : fallback)
  return {
    serviceAccount: async () => has('sa', obj('robot', 'sa-uid')),
    pod: async () => has('pod', obj('web', 'pod-uid')),
    secret: async () => undefined,
    node: async () => has('node', obj('n1', 'node-uid')),
  }
}

const claims = (extra: Partial<Parameters<typeof boundTokenClaims>[0]> = {}): TokenClaims =>
  boundTokenClaims({
    issuer: 'https://issuer.example',
    serviceAccount: { namespace: 'ns', name: 'robot', uid: 'sa-uid' },
    audiences: ['api'],
    expirationSeconds: 600,
    warnAfterSeconds: 0,
    now: NOW,
    jti: 'j',
    ...extra,
  })

const at = (ms: number) => () => new Date(NOW.getTime() + ms)

describe('bound token validation', () => {
  it('gives a minute of leeway on expiry, and no more', async () => {
    assert.equal((await boundTokenValidator(objects(), at(600_000 + 59_000))('', claims(), {}) as { username: string }).username, 'system:serviceaccount:ns:robot')
    assert.deepEqual(await boundTokenValidator(objects(), at(600_000 + 61_000))('', claims(), {}), { error: 'service account token has expired' })
  })

  it('refuses a token before its nbf and one issued in the future, past the leeway', async () => {
    assert.deepEqual(await boundTokenValidator(objects(), at(-61_000))('', claims(), {}), { error: 'service account token is not valid yet' })
    const future = claims()
    delete future.nbf
    assert.deepEqual(await boundTokenValidator(objects(), at(-61_000))('', future, {}), { error: 'service account token is issued in the future' })
  })

  it("names upstream's reasons for a service account that is gone, recreated or being deleted", async () => {
    assert.deepEqual(await boundTokenValidator(objects({ sa: undefined }), at(0))('', claims(), {}), { error: 'serviceaccounts "robot" not found' })
    assert.deepEqual(await boundTokenValidator(objects({ sa: obj('robot', 'new-uid') }), at(0))('', claims(), {}), {
      error: 'service account UID (new-uid) does not match claim (sa-uid)',
    })
    const deleting = obj('robot', 'sa-uid', new Date(NOW.getTime() - 120_000).toISOString())
    assert.deepEqual(await boundTokenValidator(objects({ sa: deleting }), at(0))('', claims(), {}), { error: 'service account ns/robot has been deleted' })
    // Deleted within the last minute: still good, as upstream's leeway allows.
    const justNow = obj('robot', 'sa-uid', new Date(NOW.getTime() - 30_000).toISOString())
    assert.equal('username' in (await boundTokenValidator(objects({ sa: justNow }), at(0))('', claims(), {})), true)
  })

  it('checks the pod of a pod-bound token, and only reports its node', async () => {
    const podBound = claims({ pod: { name: 'web', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } })
    const user = await boundTokenValidator(objects({ node: undefined }), at(0))('', podBound, {})
    assert.deepEqual((user as { extra?: unknown }).extra, {
      'authentication.kubernetes.io/credential-id': ['JTI=j'],
      'authentication.kubernetes.io/node-name': ['n1'],
      'authentication.kubernetes.io/node-uid': ['node-uid'],
      'authentication.kubernetes.io/pod-name': ['web'],
      'authentication.kubernetes.io/pod-uid': ['pod-uid'],
    })
    assert.deepEqual(await boundTokenValidator(objects({ pod: undefined }), at(0))('', podBound, {}), { error: 'service account token has been invalidated' })
    assert.deepEqual(await boundTokenValidator(objects({ pod: obj('web', 'other') }), at(0))('', podBound, {}), {
      error: 'pod UID (other) does not match service account pod ref claim (pod-uid)',
    })
  })

  it('checks the node of a node-bound token', async () => {
    const nodeBound = claims({ node: { name: 'n1', uid: 'node-uid' } })
    assert.equal('username' in (await boundTokenValidator(objects(), at(0))('', nodeBound, {})), true)
    assert.deepEqual(await boundTokenValidator(objects({ node: undefined }), at(0))('', nodeBound, {}), { error: 'service account token has been invalidated' })
  })
})

describe('service-account JWT authenticator', () => {
  const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  const allow = async () => ({ username: 'u', groups: [] })

  it('does not look at a token of another issuer, so that the next authenticator may', async () => {
    const key = await loadSigningKey(pem)
    const auth = jwtTokenAuthenticator({ issuers: ['https://issuer.example'], keys: staticKeySet([key.publicKey]), implicitAudiences: ['api'], validate: allow })
    assert.equal(await auth.authenticateToken(await signToken(key, { ...claims(), iss: 'https://other.example' })), undefined)
    assert.equal(await auth.authenticateToken('not.a.jwt'), undefined)
  })

  it('finds the key by kid, and fails with no key of that id', async () => {
    const key = await loadSigningKey(pem)
    const other = await loadSigningKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
    const auth = jwtTokenAuthenticator({ issuers: ['https://issuer.example'], keys: staticKeySet([other.publicKey]), implicitAudiences: ['api'], validate: allow })
    assert.deepEqual(await auth.authenticateToken(await signToken(key, claims())), { error: 'invalid signature, no keys found' })
  })

  it("words an audience mismatch as upstream, with Go's %q lists", async () => {
    const key = await loadSigningKey(pem)
    const auth = jwtTokenAuthenticator({ issuers: ['https://issuer.example'], keys: staticKeySet([key.publicKey]), implicitAudiences: ['api'], validate: allow })
    assert.deepEqual(await auth.authenticateToken(await signToken(key, claims({ audiences: ['a', 'b'] })), ['api']), {
      error: 'token audiences ["a" "b"] is invalid for the target audiences ["api"]',
    })
    assert.deepEqual(await auth.authenticateToken(await signToken(key, claims({ audiences: ['a', 'api'] })), ['api', 'x']), {
      user: { username: 'u', groups: [] },
      audiences: ['api'],
    })
  })

  it('checks a token\u2019s signature once while its key stays, and its claims and objects on every request', async () => {
    const key = await loadSigningKey(pem)
    let signatureChecks = 0
    const counted = { ...key.publicKey, verifierFor: (alg: string) => (signatureChecks++, key.publicKey.verifierFor(alg)) }
    let keys = [counted]
    let validations = 0
    let saExists = true
    const auth = jwtTokenAuthenticator({
      issuers: ['https://issuer.example'],
      keys: { keysFor: async () => keys, published: () => ({ keys, maxAgeSeconds: 0 }) },
      implicitAudiences: ['api'],
      validate: async () => (validations++, saExists ? { username: 'u', groups: [] } : { error: 'service account deleted' }),
    })
    const token = await signToken(key, claims())
    for (let i = 0; i < 3; i++) assert.deepEqual(await auth.authenticateToken(token), { user: { username: 'u', groups: [] }, audiences: ['api'] })
    assert.equal(signatureChecks, 1, 'one signature check for three requests')
    assert.equal(validations, 3, 'the validator decides every request')
    saExists = false
    assert.deepEqual(await auth.authenticateToken(token), { error: 'service account deleted' })
    // A token changed by one character is another token: checked, and refused.
    const tampered = token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA')
    assert.ok('error' in ((await auth.authenticateToken(tampered)) ?? {}))
    // The key taken out of the set: what it verified counts no more.
    keys = []
    saExists = true
    assert.deepEqual(await auth.authenticateToken(token), { error: 'invalid signature, no keys found' })
    const other = await loadSigningKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
    keys = [{ ...other.publicKey, kid: key.publicKey.kid }]
    assert.ok('error' in ((await auth.authenticateToken(token)) ?? {}), 'another key under the same id does not verify it')
  })
})
