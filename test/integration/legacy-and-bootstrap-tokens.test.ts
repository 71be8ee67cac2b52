/** Secret-based service-account tokens and bootstrap tokens, each read from the Secret that holds it. */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { CompactSign, importPKCS8 } from 'jose'
import {
  assertRefusedAndNothingStored,
  create,
  decodePart,
  ecKeyPem,
  issueToken,
  legacyToken as signLegacyToken,
  type TokenServer,
  tokenServer,
  whoami,
} from './service-account-fixtures.js'

const b64 = (text: string): string => Buffer.from(text).toString('base64')

describe('legacy service-account tokens', () => {
  const key = ecKeyPem()
  let s: TokenServer
  let uid: string

  const legacyToken = (secretName: string, saUid = uid): Promise<string> => signLegacyToken(s.api, key.privateKey, secretName, saUid)

  async function storeSecret(name: string, token: string, labels: Record<string, string> = {}): Promise<void> {
    await create(s.api, '/api/v1/namespaces/default/secrets', {
      metadata: { name, labels, annotations: { 'kubernetes.io/service-account.name': 'default', 'kubernetes.io/service-account.uid': uid } },
      type: 'kubernetes.io/service-account-token',
      data: { token: b64(token) },
    })
  }

  before(async () => {
    s = await tokenServer({ authentication: { serviceAccounts: { signingKey: key.privateKey } } })
    uid = (await s.api.get('/api/v1/namespaces/default/serviceaccounts/default')).body.metadata.uid
  })
  after(() => s.shutdown())

  it('authenticates the token its Secret holds, as the service account, without extra', async () => {
    const token = await legacyToken('legacy-ok')
    await storeSecret('legacy-ok', token)
    const { status, user } = await whoami(s.api, token)
    assert.equal(status, 201)
    assert.deepEqual(user, {
      username: 'system:serviceaccount:default:default',
      uid,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    })
  })

  it('refuses a token its Secret does not hold, or whose Secret is gone', async () => {
    await storeSecret('legacy-other', await legacyToken('legacy-other'))
    // Signed by the right key, naming the Secret, but not the token stored there.
    await assertRefusedAndNothingStored(s.api, await legacyTokenWithJti())
    const token = await legacyToken('legacy-gone')
    await storeSecret('legacy-gone', token)
    await s.api.delete('/api/v1/namespaces/default/secrets/legacy-gone')
    await assertRefusedAndNothingStored(s.api, token)
  })

  async function legacyTokenWithJti(): Promise<string> {
    // Same claims as the stored token plus one more: a different token for the same Secret.
    const kid = decodePart(await issueToken(s.api, 'default', 'default'), 0).kid
    const claims = {
      iss: 'kubernetes/serviceaccount',
      jti: 'copy',
      'kubernetes.io/serviceaccount/namespace': 'default',
      'kubernetes.io/serviceaccount/secret.name': 'legacy-other',
      'kubernetes.io/serviceaccount/service-account.name': 'default',
      'kubernetes.io/serviceaccount/service-account.uid': uid,
      sub: 'system:serviceaccount:default:default',
    }
    return new CompactSign(Buffer.from(JSON.stringify(claims))).setProtectedHeader({ alg: 'ES256', kid }).sign(await importPKCS8(key.privateKey, 'ES256'))
  }

  it('refuses a token of a Secret marked invalid', async () => {
    const token = await legacyToken('legacy-invalid')
    await storeSecret('legacy-invalid', token, { 'kubernetes.io/legacy-token-invalid-since': '2024-01-01' })
    await assertRefusedAndNothingStored(s.api, token)
  })

  it('refuses a token of a service account recreated with another uid', async () => {
    const token = await legacyToken('legacy-stale', 'an-older-uid')
    await storeSecret('legacy-stale', token)
    await assertRefusedAndNothingStored(s.api, token)
  })

  it('does not look the Secret up with --service-account-lookup=false', async () => {
    const relaxed = await tokenServer({ authentication: { serviceAccounts: { signingKey: key.privateKey, lookup: false } } })
    try {
      const kid = decodePart(await issueToken(relaxed.api, 'default', 'default'), 0).kid
      const claims = {
        iss: 'kubernetes/serviceaccount',
        'kubernetes.io/serviceaccount/namespace': 'default',
        'kubernetes.io/serviceaccount/secret.name': 'never-stored',
        'kubernetes.io/serviceaccount/service-account.name': 'default',
        'kubernetes.io/serviceaccount/service-account.uid': 'any',
        sub: 'system:serviceaccount:default:default',
      }
      const token = await new CompactSign(Buffer.from(JSON.stringify(claims))).setProtectedHeader({ alg: 'ES256', kid }).sign(await importPKCS8(key.privateKey, 'ES256'))
      assert.equal((await whoami(relaxed.api, token)).user.username, 'system:serviceaccount:default:default')
      // Its subject must still agree with its claims.
      const lying = { ...claims, sub: 'system:serviceaccount:kube-system:default' }
      const bad = await new CompactSign(Buffer.from(JSON.stringify(lying))).setProtectedHeader({ alg: 'ES256', kid }).sign(await importPKCS8(key.privateKey, 'ES256'))
      await assertRefusedAndNothingStored(relaxed.api, bad)
    } finally {
      await relaxed.shutdown()
    }
  })
})

describe('bootstrap tokens', () => {
  let s: TokenServer
  const id = 'abcdef'
  const secret = '0123456789abcdef'

  async function storeBootstrapSecret(tokenId: string, data: Record<string, string>, type = 'bootstrap.kubernetes.io/token'): Promise<void> {
    const encoded = Object.fromEntries(Object.entries({ 'token-id': tokenId, ...data }).map(([k, v]) => [k, b64(v)]))
    await create(s.api, '/api/v1/namespaces/kube-system/secrets', { metadata: { name: `bootstrap-token-${tokenId}` }, type, data: encoded })
  }

  before(async () => {
    s = await tokenServer({ authentication: { bootstrapTokens: true } })
    await storeBootstrapSecret(id, {
      'token-secret': secret,
      'usage-bootstrap-authentication': 'true',
      'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
      expiration: new Date(Date.now() + 3600_000).toISOString(),
    })
  })
  after(() => s.shutdown())

  it('authenticates <id>.<secret> as system:bootstrap:<id> with its groups', async () => {
    const { status, user } = await whoami(s.api, `${id}.${secret}`)
    assert.equal(status, 201)
    assert.deepEqual(user, {
      username: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'],
    })
  })

  it('refuses a wrong secret', async () => {
    await assertRefusedAndNothingStored(s.api, `${id}.0123456789abcdee`)
  })

  it('refuses an expired token', async () => {
    s.advance(3600_000 + 1000)
    try {
      await assertRefusedAndNothingStored(s.api, `${id}.${secret}`)
    } finally {
      s.advance(-(3600_000 + 1000))
    }
    await storeBootstrapSecret('pastpa', { 'token-secret': secret, 'usage-bootstrap-authentication': 'true', expiration: '2020-01-01T00:00:00Z' })
    await assertRefusedAndNothingStored(s.api, `pastpa.${secret}`)
    // Far ahead, but not RFC 3339 (no zone, no seconds, a zone without its colon): upstream's parse fails, so expired.
    // Nor are dates out of range, which JavaScript would roll over into the next month or day and Go refuses.
    const unreadable: Array<[string, string]> = [
      ['nozone', '2099-01-01T00:00:00'],
      ['noseco', '2099-01-01T00:00Z'],
      ['colonz', '2099-01-01T00:00:00.000+0000'],
      ['feb30x', '2099-02-30T00:00:00Z'],
      ['apr31x', '2099-04-31T00:00:00Z'],
      ['hour24', '2099-04-30T24:00:00Z'],
      ['month0', '2099-00-10T00:00:00Z'],
      ['zone24', '2099-04-30T10:00:00+24:00'],
    ]
    for (const [id, expiration] of unreadable) {
      await storeBootstrapSecret(id, { 'token-secret': secret, 'usage-bootstrap-authentication': 'true', expiration })
      await assertRefusedAndNothingStored(s.api, `${id}.${secret}`)
    }
  })

  it('takes an expiration on the last day of a month, or in a leap year\'s February 29', async () => {
    for (const [id, expiration] of [['lastdy', '2099-04-30T23:59:59+01:00'], ['leapyr', '2096-02-29T00:00:00Z']]) {
      await storeBootstrapSecret(id!, { 'token-secret': secret, 'usage-bootstrap-authentication': 'true', expiration: expiration! })
      assert.equal((await whoami(s.api, `${id}.${secret}`)).status, 201)
    }
  })

  it('refuses a token not marked for authentication', async () => {
    await storeBootstrapSecret('nouse1', { 'token-secret': secret, 'usage-bootstrap-signing': 'true' })
    await assertRefusedAndNothingStored(s.api, `nouse1.${secret}`)
  })

  it('refuses a Secret of another type, and extra groups outside system:bootstrappers', async () => {
    await storeBootstrapSecret('opaque', { 'token-secret': secret, 'usage-bootstrap-authentication': 'true' }, 'Opaque')
    await assertRefusedAndNothingStored(s.api, `opaque.${secret}`)
    await storeBootstrapSecret('admins', { 'token-secret': secret, 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:masters' })
    await assertRefusedAndNothingStored(s.api, `admins.${secret}`)
  })

  it('knows no bootstrap token unless --enable-bootstrap-token-auth', async () => {
    const off = await tokenServer()
    try {
      await create(off.api, '/api/v1/namespaces/kube-system/secrets', {
        metadata: { name: `bootstrap-token-${id}` },
        type: 'bootstrap.kubernetes.io/token',
        data: { 'token-id': b64(id), 'token-secret': b64(secret), 'usage-bootstrap-authentication': b64('true') },
      })
      await assertRefusedAndNothingStored(off.api, `${id}.${secret}`)
    } finally {
      await off.shutdown()
    }
  })
})
