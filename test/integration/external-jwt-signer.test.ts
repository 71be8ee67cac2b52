import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ADMIN_IDENTITY, createApiServer } from '../../core/index.js'
import { externalJwtSigner } from '../../runtimes/node/daemon/external-jwt-signer.js'
import { jwsHeader, jwsSignature, signerKey, startTestSigner, type TestSigner } from './external-jwt-signer-server.js'
import { assertRefusedAndNothingStored, create, decodePart, ISSUER, issueToken, type TokenServer, tokenRequest, tokenServer, whoami } from './service-account-fixtures.js'

const HOUR = 3600

/** A token over `claims`, signed by `key` and naming `kid`: what a forger holding some other key can make. */
function forgedToken(key: ReturnType<typeof signerKey>, kid: string, claims: Record<string, unknown>): string {
  const header = jwsHeader({ alg: key.alg, kid, typ: 'JWT' })
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url')
  return `${header}.${payload}.${jwsSignature(key, `${header}.${payload}`)}`
}

describe('service-account tokens signed by an external signer (--service-account-signing-endpoint)', () => {
  let signer: TestSigner
  let s: TokenServer
  before(async () => {
    signer = await startTestSigner({ keys: [signerKey('key-1'), { ...signerKey('old-rsa', 'rsa'), exclude: true }], maxTokenExpirationSeconds: 24 * HOUR })
    s = await tokenServer({ authentication: { serviceAccounts: { externalSigner: externalJwtSigner(signer.socketPath) } } })
    await create(s.api, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'robot' } })
  })
  after(async () => {
    await s.shutdown()
    await signer.close()
  })

  it("issues tokens the signer signed over this server's claims, which then authenticate", async () => {
    const before = signer.calls.sign
    const token = await issueToken(s.api, 'default', 'robot')
    assert.equal(signer.calls.sign, before + 1)
    assert.deepEqual(decodePart(token, 0), { alg: 'ES256', kid: 'key-1', typ: 'JWT' })
    // The signer signed exactly the payload the token carries.
    assert.equal(signer.signed.at(-1), token.split('.')[1])
    const claims = decodePart(token, 1)
    assert.equal(claims.iss, ISSUER)
    assert.equal(claims.sub, 'system:serviceaccount:default:robot')
    const { status, user } = await whoami(s.api, token)
    assert.equal(status, 201)
    assert.equal(user.username, 'system:serviceaccount:default:robot')
  })

  it("caps a longer request at the signer's maximum lifetime, with a warning", async () => {
    const r = await s.api.post('/api/v1/namespaces/default/serviceaccounts/robot/token', tokenRequest({ expirationSeconds: 48 * HOUR }))
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.spec.expirationSeconds, 24 * HOUR)
    assert.match(r.headers.get('warning') ?? '', /requested expiration of 172800 seconds shortened to 86400 seconds/)
    const claims = decodePart(r.body.status.token, 1)
    assert.equal(claims.exp - claims.iat, 24 * HOUR)
  })

  it('publishes the keys FetchKeys returned, without the verify-only ones, for as long as the refresh hint', async () => {
    const r = await s.api.get('/openid/v1/jwks')
    assert.equal(r.status, 200)
    assert.deepEqual(
      r.body.keys.map((k: Record<string, string>) => [k.kid, k.kty, k.alg, k.use]),
      [['key-1', 'EC', 'ES256', 'sig']],
    )
    const maxAge = Number(/max-age=(\d+)/.exec(r.headers.get('cache-control') ?? '')?.[1])
    assert.ok(maxAge > 0 && maxAge <= HOUR, r.headers.get('cache-control') ?? '')
    const config = (await s.api.get('/.well-known/openid-configuration')).body
    assert.deepEqual(config.id_token_signing_alg_values_supported, ['ES256'])
  })

  it('accepts a token of a verify-only key the signer still publishes', async () => {
    const verifyOnly = signer.published[1]
    assert.ok(verifyOnly)
    const claims = decodePart(await issueToken(s.api, 'default', 'robot'), 1)
    const token = forgedToken(verifyOnly, verifyOnly.kid, claims)
    assert.equal((await whoami(s.api, token)).status, 201)
  })

  it('refuses with 401 a token signed by a key the signer does not publish, under its own or a published key id', async () => {
    const claims = decodePart(await issueToken(s.api, 'default', 'robot'), 1)
    const rogue = signerKey('rogue')
    const fetches = signer.calls.fetchKeys
    await assertRefusedAndNothingStored(s.api, forgedToken(rogue, 'rogue', claims))
    // An unknown key id makes the server ask the signer once more, in case it rotated.
    assert.equal(signer.calls.fetchKeys, fetches + 1)
    await assertRefusedAndNothingStored(s.api, forgedToken(rogue, 'key-1', claims))
  })

  it('follows a rotation: a new key id is fetched when a token names it; a key no longer published stops verifying', async () => {
    const oldToken = await issueToken(s.api, 'default', 'robot')
    const next = signerKey('key-2')
    signer.published = [next]
    signer.signing = next
    const newToken = await issueToken(s.api, 'default', 'robot')
    assert.equal(decodePart(newToken, 0).kid, 'key-2')
    assert.equal((await whoami(s.api, newToken)).status, 201)
    // The fetch for key-2 replaced the whole set: key-1 is gone.
    await assertRefusedAndNothingStored(s.api, oldToken)
    const jwks = (await s.api.get('/openid/v1/jwks')).body
    assert.deepEqual(
      jwks.keys.map((k: Record<string, string>) => k.kid),
      ['key-2'],
    )
  })

  it('gives out no token when the signer answers a header it may not (unknown field, no typ, a verify-only key), nor when it is down', async () => {
    const verifyOnly = { alg: 'RS256', kid: 'old-rsa', typ: 'JWT' }
    signer.published = [signer.signing, { ...signerKey('old-rsa', 'rsa'), exclude: true }]
    const cases: [Record<string, unknown> | undefined, boolean, RegExp][] = [
      [{ alg: 'ES256', kid: 'key-2', typ: 'JWT', x5u: 'https://evil.example' }, false, /while validating header: .*unknown field "x5u"/],
      [{ alg: 'ES256', kid: 'key-2' }, false, /while validating header: bad type/],
      [{ alg: 'HS256', kid: 'key-2', typ: 'JWT' }, false, /bad signing algorithm "HS256"/],
      [undefined, true, /failed to generate token: while signing jwt: the signer is down/],
    ]
    // The verify-only key is known once the set was fetched again for an unknown id.
    const fetched = await whoami(s.api, forgedToken(signerKey('x'), 'unknown-kid', { iss: ISSUER }))
    assert.equal(fetched.status, 401)
    cases.push([verifyOnly, false, /key used for signing JWT \(kid: old-rsa\) is excluded from OIDC discovery docs/])
    for (const [header, down, message] of cases) {
      if (header) signer.headerOverride = header
      else delete signer.headerOverride
      signer.failing = down
      const r = await s.api.post('/api/v1/namespaces/default/serviceaccounts/robot/token', tokenRequest())
      assert.equal(r.status, 500, r.text)
      assert.equal(r.body.reason, 'InternalError')
      assert.match(r.body.message, message)
      assert.doesNotMatch(r.text, /"token"/)
    }
    delete signer.headerOverride
    signer.failing = false
  })
})

describe('the external signer keys between tokens', () => {
  it('fetches the keys again when the refresh hint passes, so discovery shows a rotation no token has named yet', async () => {
    const signer = await startTestSigner({ refreshHintSeconds: 1 })
    const s = await tokenServer({ authentication: { serviceAccounts: { externalSigner: externalJwtSigner(signer.socketPath) } } })
    try {
      const kids = async (): Promise<string[]> => (await s.api.get('/openid/v1/jwks')).body.keys.map((k: Record<string, string>) => k.kid)
      assert.deepEqual(await kids(), ['key-1'])
      signer.published = [signerKey('key-2')]
      let seen: string[] = []
      for (let i = 0; i < 300 && seen[0] !== 'key-2'; i++) {
        await new Promise((r) => setTimeout(r, 100))
        seen = await kids()
      }
      assert.deepEqual(seen, ['key-2'])
    } finally {
      await s.shutdown()
      await signer.close()
    }
  })
})

describe('starting with an external signer', () => {
  it('stops start-up when the signer cannot be reached, or its lifetime bound is below the flag or ten minutes', async () => {
    const signer = await startTestSigner({ maxTokenExpirationSeconds: 2 * HOUR })
    try {
      const start = async (maxExpirationSeconds?: number): Promise<string> => {
        const server = createApiServer(
          {
            embeddedIdentity: ADMIN_IDENTITY,
            authentication: { serviceAccounts: { externalSigner: externalJwtSigner(signer.socketPath), ...(maxExpirationSeconds ? { maxExpirationSeconds } : {}) } },
          },
          {},
        )
        try {
          await server.ready
          return 'ready'
        } catch (err) {
          return (err as Error).message
        } finally {
          await server.shutdown()
        }
      }
      assert.equal(await start(2 * HOUR), 'ready')
      assert.equal(
        await start(3 * HOUR),
        'service-account-max-token-expiration cannot be set longer than the token expiration supported by service-account-signing-endpoint: 3h0m0s > 2h0m0s',
      )
      signer.maxTokenExpirationSeconds = 300
      assert.equal(await start(), 'max token life supported by external-jwt-signer (300s) is less than acceptable (min 600s)')
      signer.failing = true
      assert.match(await start(), /^while setting up external-jwt-signer: while initially filling key cache: while fetching token verification keys: the signer is down$/)
    } finally {
      await signer.close()
    }
  })
})
