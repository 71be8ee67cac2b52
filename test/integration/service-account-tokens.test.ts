import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MemoryStorage } from '../../core/storage/memory.js'
import {
  create,
  decodePart,
  ecKeyPem,
  ISSUER,
  issueToken,
  network,
  podBody,
  rsaKeyPem,
  type TokenServer,
  tokenRequest,
  tokenServer,
  whoami,
} from './service-account-fixtures.js'

const YEAR = 365 * 24 * 60 * 60

describe('TokenRequest', () => {
  let s: TokenServer
  before(async () => {
    s = await tokenServer({ authentication: { serviceAccounts: { maxExpirationSeconds: 48 * 3600 } } })
    await create(s.api, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'robot' } })
    await create(s.api, '/api/v1/nodes', { metadata: { name: 'node-1' } })
    await create(s.api, '/api/v1/namespaces/default/pods', podBody('web', 'robot', 'node-1'))
    await create(s.api, '/api/v1/namespaces/default/pods', podBody('other', 'default'))
    await create(s.api, '/api/v1/namespaces/default/secrets', { metadata: { name: 'bound' } })
  })
  after(() => s.shutdown())

  it("issues a token with upstream's claims and answers with the TokenRequest and its expiry", async () => {
    const sa = (await s.api.get('/api/v1/namespaces/default/serviceaccounts/robot')).body
    const r = await s.api.post('/api/v1/namespaces/default/serviceaccounts/robot/token', tokenRequest())
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.kind, 'TokenRequest')
    assert.equal(r.body.apiVersion, 'authentication.k8s.io/v1')
    assert.deepEqual(r.body.spec, { audiences: [ISSUER], expirationSeconds: 3600, boundObjectRef: null })
    assert.deepEqual(Object.keys(r.body.metadata), ['name', 'namespace', 'creationTimestamp'])
    const header = decodePart(r.body.status.token, 0)
    const claims = decodePart(r.body.status.token, 1)
    assert.deepEqual(Object.keys(header), ['alg', 'kid'])
    assert.equal(header.alg, 'ES256')
    assert.deepEqual(Object.keys(claims), ['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub'])
    assert.equal(claims.iss, ISSUER)
    assert.equal(claims.sub, 'system:serviceaccount:default:robot')
    assert.deepEqual(claims.aud, [ISSUER])
    assert.equal(claims.exp - claims.iat, 3600)
    assert.equal(claims.nbf, claims.iat)
    assert.match(claims.jti, /^[0-9a-f-]{36}$/)
    assert.deepEqual(claims['kubernetes.io'], { namespace: 'default', serviceaccount: { name: 'robot', uid: sa.metadata.uid } })
    assert.equal(Date.parse(r.body.status.expirationTimestamp) / 1000, claims.exp)
  })

  it('authenticates the token as the service account, with its groups and the credential id', async () => {
    const sa = (await s.api.get('/api/v1/namespaces/default/serviceaccounts/robot')).body
    const token = await issueToken(s.api, 'default', 'robot')
    const { status, user } = await whoami(s.api, token)
    assert.equal(status, 201)
    assert.deepEqual(user, {
      username: 'system:serviceaccount:default:robot',
      uid: sa.metadata.uid,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${decodePart(token, 1).jti}`] },
    })
  })

  it("binds a token to a pod and names the pod's node; the user carries both in extra", async () => {
    const pod = (await s.api.get('/api/v1/namespaces/default/pods/web')).body
    const node = (await s.api.get('/api/v1/nodes/node-1')).body
    const token = await issueToken(s.api, 'default', 'robot', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: pod.metadata.uid } })
    assert.deepEqual(decodePart(token, 1)['kubernetes.io'].pod, { name: 'web', uid: pod.metadata.uid })
    assert.deepEqual(decodePart(token, 1)['kubernetes.io'].node, { name: 'node-1', uid: node.metadata.uid })
    const { user } = await whoami(s.api, token)
    assert.deepEqual(user.extra['authentication.kubernetes.io/pod-name'], ['web'])
    assert.deepEqual(user.extra['authentication.kubernetes.io/pod-uid'], [pod.metadata.uid])
    assert.deepEqual(user.extra['authentication.kubernetes.io/node-name'], ['node-1'])
    assert.deepEqual(user.extra['authentication.kubernetes.io/node-uid'], [node.metadata.uid])
  })

  it('binds a token to a node or a secret', async () => {
    const node = (await s.api.get('/api/v1/nodes/node-1')).body
    const byNode = await issueToken(s.api, 'default', 'robot', { boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: 'node-1' } })
    assert.deepEqual((await whoami(s.api, byNode)).user.extra['authentication.kubernetes.io/node-uid'], [node.metadata.uid])
    const secret = (await s.api.get('/api/v1/namespaces/default/secrets/bound')).body
    const bySecret = await issueToken(s.api, 'default', 'robot', { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'bound' } })
    assert.deepEqual(decodePart(bySecret, 1)['kubernetes.io'].secret, { name: 'bound', uid: secret.metadata.uid })
    assert.equal((await whoami(s.api, bySecret)).status, 201)
  })

  it('extends a pod-bound token of the default 3607s request to a year that warns after the hour', async () => {
    const token = await issueToken(s.api, 'default', 'robot', { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } })
    const claims = decodePart(token, 1)
    assert.equal(claims.exp - claims.iat, YEAR)
    assert.equal(claims['kubernetes.io'].warnafter, claims.iat + 3607)
    // Not bound to a pod: not extended.
    const plain = decodePart(await issueToken(s.api, 'default', 'robot', { expirationSeconds: 3607 }), 1)
    assert.equal(plain.exp - plain.iat, 3607)
    assert.equal(plain['kubernetes.io'].warnafter, undefined)
  })

  it('caps a longer request at --service-account-max-token-expiration with a warning, not an error', async () => {
    const r = await s.api.post('/api/v1/namespaces/default/serviceaccounts/robot/token', tokenRequest({ expirationSeconds: 100 * 3600 }))
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.spec.expirationSeconds, 48 * 3600)
    assert.equal(r.headers.get('warning'), '299 - "requested expiration of 360000 seconds shortened to 172800 seconds"')
    const claims = decodePart(r.body.status.token, 1)
    assert.equal(claims.exp - claims.iat, 48 * 3600)
  })

  const refusals: { what: string; path?: string; body: Record<string, unknown>; code: number; message: string }[] = [
    {
      what: 'a duration under 10 minutes',
      body: tokenRequest({ expirationSeconds: 60 }),
      code: 422,
      message: 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    },
    {
      what: 'a duration over 2^32 seconds',
      body: tokenRequest({ expirationSeconds: 2 ** 32 + 1 }),
      code: 422,
      message: 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds',
    },
    ...(
      [
        ['a fraction', 3600.5, 'number 3600.5'],
        ['a string', '3600', 'string'],
        ['a boolean', true, 'bool'],
        ['a list', [600], 'array'],
      ] as const
    ).map(([kind, value, got]) => ({
      what: `a duration that is ${kind}`,
      body: tokenRequest({ expirationSeconds: value }),
      code: 400,
      message: `TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal ${got} into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64`,
    })),
    {
      what: 'a name other than the service account',
      body: tokenRequest({}, { name: 'someone' }),
      code: 422,
      message: 'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "someone": must match the service account name if specified',
    },
    {
      what: 'a service account that does not exist',
      path: '/api/v1/namespaces/default/serviceaccounts/ghost/token',
      body: tokenRequest(),
      code: 404,
      message: 'serviceaccounts "ghost" not found',
    },
    {
      what: 'a bound object of a kind tokens cannot be bound to',
      body: tokenRequest({ boundObjectRef: { kind: 'Deployment', apiVersion: 'apps/v1', name: 'web' } }),
      code: 400,
      message: 'cannot bind token to object of type apps/v1, Kind=Deployment',
    },
    {
      what: 'a bound object with another uid',
      body: tokenRequest({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'not-the-uid' } }),
      code: 409,
      message:
        'Operation cannot be fulfilled on Pod "web": the UID in the bound object reference (not-the-uid) does not match the UID in record. The object might have been deleted and then recreated',
    },
    {
      what: 'a pod running as another service account',
      body: tokenRequest({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other' } }),
      code: 400,
      message: 'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.',
    },
    {
      what: 'a bound pod that does not exist',
      body: tokenRequest({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'gone' } }),
      code: 404,
      message: 'pods "gone" not found',
    },
  ]
  for (const c of refusals) {
    it(`refuses ${c.what} with ${c.code} and keeps nothing`, async () => {
      const before = (await s.api.get('/api/v1/namespaces/default/serviceaccounts')).body.items
      const r = await s.api.post(c.path ?? '/api/v1/namespaces/default/serviceaccounts/robot/token', c.body)
      assert.equal(r.status, c.code, r.text)
      assert.equal(r.body.kind, 'Status')
      assert.equal(r.body.message, c.message)
      assert.equal(r.body.status.token, undefined)
      assert.deepEqual((await s.api.get('/api/v1/namespaces/default/serviceaccounts')).body.items, before)
    })
  }
})

describe('service-account token audiences', () => {
  let s: TokenServer
  before(async () => {
    s = await tokenServer()
  })
  after(() => s.shutdown())

  const review = (token: string, audiences?: string[]) =>
    s.api.post('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, ...(audiences ? { audiences } : {}) },
    })

  it('reviews a token for the audience it was issued for, and names that audience', async () => {
    const token = await issueToken(s.api, 'default', 'default', { audiences: ['vault'] })
    const r = await review(token, ['vault'])
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.status.authenticated, true)
    assert.deepEqual(r.body.status.audiences, ['vault'])
    assert.equal(r.body.status.user.username, 'system:serviceaccount:default:default')
  })

  it("does not authenticate a token of another audience for the API, and says why", async () => {
    const token = await issueToken(s.api, 'default', 'default', { audiences: ['vault'] })
    const r = await review(token)
    assert.equal(r.body.status.authenticated, undefined)
    assert.deepEqual(r.body.status.user, {})
    assert.equal(r.body.status.error, `token audiences ["vault"] is invalid for the target audiences ["${ISSUER}"]`)
    assert.equal((await whoami(s.api, token)).status, 401)
  })

  it('compares a token of 60,000 audiences with a review asking 100,000 others in one pass, not each against each', async () => {
    // Compared each against each, this review held the thread some 15 s (the thread's stall is not visible to a test in it).
    const issued = Array.from({ length: 60_000 }, (_, i) => `issued-${i}`)
    const token = await issueToken(s.api, 'default', 'default', { audiences: issued })
    const asked = [...Array.from({ length: 100_000 }, (_, i) => `asked-${i}`), 'issued-59999', 'issued-7']
    const r = await review(token, asked)
    assert.equal(r.status, 201, r.text.slice(0, 300))
    assert.equal(r.body.status.authenticated, true)
    assert.deepEqual(r.body.status.audiences, ['issued-7', 'issued-59999'], "the token's order")
  })

  it('accepts a token for several audiences where one of them is asked', async () => {
    const token = await issueToken(s.api, 'default', 'default', { audiences: ['vault', ISSUER] })
    assert.equal((await whoami(s.api, token)).status, 201)
    assert.deepEqual((await review(token, ['vault', 'other'])).body.status.audiences, ['vault'])
  })

  it('reports the status of a review for the API with its audiences', async () => {
    const token = await issueToken(s.api, 'default', 'default')
    const r = await review(token)
    assert.equal(r.body.status.authenticated, true)
    assert.deepEqual(r.body.status.audiences, [ISSUER])
  })

  it('honours --api-audiences: tokens default to them and must be meant for them', async () => {
    const custom = await tokenServer({ authentication: { apiAudiences: ['api-a', 'api-b'] } })
    try {
      const token = await issueToken(custom.api, 'default', 'default')
      assert.deepEqual(decodePart(token, 1).aud, ['api-a', 'api-b'])
      assert.equal((await whoami(custom.api, token)).status, 201)
      const forIssuer = await issueToken(custom.api, 'default', 'default', { audiences: [ISSUER] })
      assert.equal((await whoami(custom.api, forIssuer)).status, 401)
    } finally {
      await custom.shutdown()
    }
  })
})

describe('service-account keys and issuers', () => {
  it('signs RS256 with an RSA key, and names the key id the key set publishes', async () => {
    const rsa = rsaKeyPem()
    const s = await tokenServer({ authentication: { serviceAccounts: { signingKey: rsa.privateKey, keys: [rsa.publicKey] } } })
    try {
      const token = await issueToken(s.api, 'default', 'default')
      const header = decodePart(token, 0)
      assert.equal(header.alg, 'RS256')
      const jwks = (await s.api.get('/openid/v1/jwks')).body
      assert.deepEqual(
        jwks.keys.map((k: Record<string, string>) => [k.kid, k.kty, k.alg, k.use, k.e]),
        [[header.kid, 'RSA', 'RS256', 'sig', 'AQAB']],
      )
      assert.equal((await whoami(s.api, token)).status, 201)
    } finally {
      await s.shutdown()
    }
  })

  it('signs with the ES algorithm of a P-384 key', async () => {
    const ec = ecKeyPem('P-384')
    const s = await tokenServer({ authentication: { serviceAccounts: { signingKey: ec.privateKey } } })
    try {
      const token = await issueToken(s.api, 'default', 'default')
      assert.equal(decodePart(token, 0).alg, 'ES384')
      assert.equal((await whoami(s.api, token)).status, 201)
    } finally {
      await s.shutdown()
    }
  })

  it('accepts tokens of an old key still listed after rotation, and of every issuer', async () => {
    const oldKey = ecKeyPem()
    const newKey = ecKeyPem()
    const storage = new MemoryStorage()
    const first = await tokenServer({ authentication: { serviceAccounts: { signingKey: oldKey.privateKey, issuers: ['https://old.example'] } } }, storage)
    const oldToken = await issueToken(first.api, 'default', 'default')
    await first.shutdown()
    // The same objects, restarted with a new signing key, the old one kept for verifying, and a new issuer first.
    const rotated = await tokenServer(
      {
        authentication: {
          serviceAccounts: { signingKey: newKey.privateKey, keys: [newKey.publicKey, oldKey.publicKey], issuers: ['https://new.example', 'https://old.example'] },
          apiAudiences: ['https://new.example', 'https://old.example'],
        },
      },
      storage,
    )
    try {
      assert.equal((await whoami(rotated.api, oldToken)).status, 201)
      const newToken = await issueToken(rotated.api, 'default', 'default')
      assert.equal(decodePart(newToken, 1).iss, 'https://new.example')
      assert.notEqual(decodePart(newToken, 0).kid, decodePart(oldToken, 0).kid)
      assert.equal((await whoami(rotated.api, newToken)).status, 201)
    } finally {
      await rotated.shutdown()
    }
  })

  it('serves issuer discovery for an https issuer, with the configured key set URI', async () => {
    const s = await tokenServer({ authentication: { serviceAccounts: { issuers: ['https://issuer.example/cluster'], jwksUri: 'https://keys.example/jwks' } } })
    try {
      const config = await s.api.get('/.well-known/openid-configuration', { connection: network, headers: {} })
      // No credential: refused as any request under AlwaysAllow without anonymous access.
      assert.equal(config.status, 401)
      const r = await s.api.get('/.well-known/openid-configuration')
      assert.equal(r.status, 200)
      assert.equal(r.headers.get('content-type'), 'application/json')
      assert.equal(r.headers.get('cache-control'), 'public, max-age=3600')
      assert.equal(
        r.text,
        '{"issuer":"https://issuer.example/cluster","jwks_uri":"https://keys.example/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}',
      )
      const keys = await s.api.get('/openid/v1/jwks')
      assert.equal(keys.headers.get('content-type'), 'application/jwk-set+json')
      assert.equal(keys.headers.get('cache-control'), 'public, max-age=3600')
      assert.deepEqual(Object.keys(keys.body.keys[0]), ['use', 'kty', 'kid', 'crv', 'alg', 'x', 'y'])
    } finally {
      await s.shutdown()
    }
  })

  it('names --external-hostname and the secure port in the key set URI and in /api\'s server address', async () => {
    const s = await tokenServer({ externalHostname: 'api.example.test', securePort: 6443, authentication: { serviceAccounts: { issuers: ['https://issuer.example'] } } })
    try {
      const r = await s.api.get('/.well-known/openid-configuration')
      assert.equal(r.body.jwks_uri, 'https://api.example.test:6443/openid/v1/jwks')
      const api = await s.api.get('/api')
      assert.deepEqual(api.body.serverAddressByClientCIDRs, [{ clientCIDR: '0.0.0.0/0', serverAddress: 'api.example.test:6443' }])
    } finally {
      await s.shutdown()
    }
  })

  it('does not serve discovery for an issuer that is not an https URL', async () => {
    const s = await tokenServer({ authentication: { serviceAccounts: { issuers: ['cluster-issuer'] } } })
    try {
      assert.equal((await s.api.get('/.well-known/openid-configuration')).status, 404)
      assert.equal((await s.api.get('/openid/v1/jwks')).status, 404)
      const token = await issueToken(s.api, 'default', 'default')
      assert.equal(decodePart(token, 1).iss, 'cluster-issuer')
      assert.equal((await whoami(s.api, token)).status, 201)
    } finally {
      await s.shutdown()
    }
  })

  it('issues and accepts no service-account token when turned off', async () => {
    const s = await tokenServer({ authentication: { serviceAccounts: false } })
    try {
      const r = await s.api.post('/api/v1/namespaces/default/serviceaccounts/default/token', tokenRequest())
      assert.equal(r.status, 404)
      assert.equal((await s.api.get('/openid/v1/jwks')).status, 404)
    } finally {
      await s.shutdown()
    }
  })
})
