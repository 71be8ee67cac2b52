/**
 * The attack set for service-account tokens: every forged, stale or
 * misdirected token is a 401 and the write it carried stores nothing.
 */
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { CompactSign, importPKCS8 } from 'jose'
import { TOKEN_SUCCESS_CACHE_TTL_MS } from '../../core/authn/token-cache.js'
import {
  assertRefusedAndNothingStored,
  create,
  decodePart,
  ecKeyPem,
  ISSUER,
  issueToken,
  podBody,
  type TokenServer,
  tokenServer,
  whoami,
} from './service-account-fixtures.js'

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

describe('service-account token attacks', () => {
  const key = ecKeyPem()
  let s: TokenServer
  let kid: string
  let saUid: string

  /** A token signed with the server's own key, with claims of the test's choosing. */
  async function signed(claims: Record<string, unknown>, signingKey = key.privateKey): Promise<string> {
    const pk = await importPKCS8(signingKey, 'ES256')
    return new CompactSign(Buffer.from(JSON.stringify(claims))).setProtectedHeader({ alg: 'ES256', kid }).sign(pk)
  }

  function claimsFor(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const now = Math.floor(s.now().getTime() / 1000)
    return {
      aud: [ISSUER],
      exp: now + 3600,
      iat: now,
      iss: ISSUER,
      jti: 'attack',
      'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'default', uid: saUid } },
      nbf: now,
      sub: 'system:serviceaccount:default:default',
      ...overrides,
    }
  }

  before(async () => {
    s = await tokenServer({ authentication: { serviceAccounts: { signingKey: key.privateKey } } })
    const token = await issueToken(s.api, 'default', 'default')
    kid = decodePart(token, 0).kid
    saUid = (await s.api.get('/api/v1/namespaces/default/serviceaccounts/default')).body.metadata.uid
  })
  after(() => s.shutdown())

  it('accepts the honest token the attacks start from', async () => {
    assert.equal((await whoami(s.api, await signed(claimsFor()))).status, 201)
  })

  it('refuses a forged signature', async () => {
    const token = await issueToken(s.api, 'default', 'default')
    const [h, p, sig = ''] = token.split('.')
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`
    await assertRefusedAndNothingStored(s.api, `${h}.${p}.${flipped}`)
    // The same signature over claims that say something else.
    await assertRefusedAndNothingStored(s.api, `${h}.${b64(claimsFor({ sub: 'system:serviceaccount:kube-system:admin' }))}.${sig}`)
  })

  it('refuses a token signed by a key the server does not know', async () => {
    await assertRefusedAndNothingStored(s.api, await signed(claimsFor(), ecKeyPem().privateKey))
  })

  it('refuses an expired token, past the minute of leeway', async () => {
    const token = await issueToken(s.api, 'default', 'default', { expirationSeconds: 600 })
    assert.equal((await whoami(s.api, token)).status, 201)
    s.advance(600_000 + 61_000)
    try {
      await assertRefusedAndNothingStored(s.api, token)
    } finally {
      s.advance(-(600_000 + 61_000))
    }
  })

  it('refuses a token not yet valid, and one issued in the future', async () => {
    const later = Math.floor(s.now().getTime() / 1000) + 3600
    await assertRefusedAndNothingStored(s.api, await signed(claimsFor({ nbf: later })))
    await assertRefusedAndNothingStored(s.api, await signed(claimsFor({ iat: later })))
  })

  it('refuses a token for another audience', async () => {
    await assertRefusedAndNothingStored(s.api, await issueToken(s.api, 'default', 'default', { audiences: ['https://elsewhere.example'] }))
  })

  it('refuses a token of another issuer, even signed with the right key', async () => {
    await assertRefusedAndNothingStored(s.api, await signed(claimsFor({ iss: 'https://evil.example' })))
  })

  it('refuses alg none', async () => {
    const header = { alg: 'none', kid }
    await assertRefusedAndNothingStored(s.api, `${b64(header)}.${b64(claimsFor())}.`)
    await assertRefusedAndNothingStored(s.api, `${b64({ alg: 'none' })}.${b64(claimsFor())}.${b64('x')}`)
  })

  it('refuses HS256 signed with the public key as the HMAC secret', async () => {
    for (const secret of [key.publicKey, Buffer.from(key.publicKey.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64')]) {
      const head = `${b64({ alg: 'HS256', kid })}.${b64(claimsFor())}`
      const mac = createHmac('sha256', secret).update(head).digest('base64url')
      await assertRefusedAndNothingStored(s.api, `${head}.${mac}`)
    }
  })

  it('refuses a token of a deleted service account, and of one recreated with the same name', async () => {
    await create(s.api, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'temp' } })
    const token = await issueToken(s.api, 'default', 'temp')
    assert.equal((await whoami(s.api, token)).status, 201)
    assert.equal((await s.api.delete('/api/v1/namespaces/default/serviceaccounts/temp')).status, 200)
    // Upstream's token cache keeps the answer of that use for ten seconds.
    s.advance(TOKEN_SUCCESS_CACHE_TTL_MS)
    await assertRefusedAndNothingStored(s.api, token)
    await create(s.api, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'temp' } })
    await assertRefusedAndNothingStored(s.api, token)
  })

  it('refuses a token bound to a deleted pod, and to a pod recreated with the same name', async () => {
    await create(s.api, '/api/v1/namespaces/default/pods', podBody('bound-pod', 'default'))
    const token = await issueToken(s.api, 'default', 'default', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'bound-pod' } })
    assert.equal((await whoami(s.api, token)).status, 201)
    assert.equal((await s.api.delete('/api/v1/namespaces/default/pods/bound-pod?gracePeriodSeconds=0')).status, 200)
    s.advance(TOKEN_SUCCESS_CACHE_TTL_MS)
    await assertRefusedAndNothingStored(s.api, token)
    await create(s.api, '/api/v1/namespaces/default/pods', podBody('bound-pod', 'default'))
    await assertRefusedAndNothingStored(s.api, token)
  })

  it('refuses a token bound to a deleted secret or node', async () => {
    await create(s.api, '/api/v1/namespaces/default/secrets', { metadata: { name: 'bound-secret' } })
    await create(s.api, '/api/v1/nodes', { metadata: { name: 'bound-node' } })
    const bySecret = await issueToken(s.api, 'default', 'default', { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'bound-secret' } })
    const byNode = await issueToken(s.api, 'default', 'default', { boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: 'bound-node' } })
    await s.api.delete('/api/v1/namespaces/default/secrets/bound-secret')
    await s.api.delete('/api/v1/nodes/bound-node')
    await assertRefusedAndNothingStored(s.api, bySecret)
    await assertRefusedAndNothingStored(s.api, byNode)
  })

  it('refuses a token whose claims name the service account with another uid', async () => {
    const claims = claimsFor({ 'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'default', uid: 'another-uid' } } })
    await assertRefusedAndNothingStored(s.api, await signed(claims))
  })

  it('refuses text that is not a JWT, and a JWT whose payload is not JSON', async () => {
    await assertRefusedAndNothingStored(s.api, 'not-a-token')
    await assertRefusedAndNothingStored(s.api, `${b64({ alg: 'ES256', kid })}.${b64('not json')}.${b64('sig')}`)
  })
})
