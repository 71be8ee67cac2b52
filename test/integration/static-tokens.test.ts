/**
 * --token-auth-file tokens (options.authentication.tokens): the right token
 * authenticates; a near miss (one byte off, a prefix, a longer token) is a
 * 401, for a read and for a write, which stores nothing.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ConnectionInfo, createApiServer } from '../../core/index.js'
import { TestClient } from './harness.js'

const TOKEN = 'f0e1d2c3b4a5968778695a4b3c2d1e0f'
const OTHER = 'a-second-token-of-the-same-file'
/** A request that came over a transport, so it is authenticated (no embedded identity). */
const network: ConnectionInfo = {}
const whoami = '/apis/authentication.k8s.io/v1/selfsubjectreviews'
const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }

const NEAR_MISSES: [string, string][] = [
  ['the same length, its last byte off', `${TOKEN.slice(0, -1)}e`],
  ['the same length, its first byte off', `e${TOKEN.slice(1)}`],
  ['a prefix', TOKEN.slice(0, -1)],
  ['longer', `${TOKEN}0`],
  ['another case', TOKEN.toUpperCase()],
]

describe('static bearer tokens', () => {
  let api: TestClient
  before(() => {
    api = new TestClient(
      createApiServer({
        authentication: {
          tokens: [
            { token: TOKEN, user: { username: 'alice', uid: '42', groups: ['dev'] } },
            { token: OTHER, user: { username: 'bob', groups: ['system:masters'] } },
          ],
        },
      }),
    )
  })
  after(() => api.server.shutdown())

  const as = (token: string) => ({ connection: network, headers: { authorization: `Bearer ${token}` } })

  it('accepts each token of the file as its user', async () => {
    const alice = await api.post(whoami, review, as(TOKEN))
    assert.equal(alice.status, 201, alice.text)
    assert.deepEqual(alice.body.status.userInfo, { username: 'alice', uid: '42', groups: ['dev', 'system:authenticated'] })
    const bob = await api.post(whoami, review, as(OTHER))
    assert.equal(bob.status, 201, bob.text)
    assert.equal(bob.body.status.userInfo.username, 'bob')
  })

  for (const [what, guess] of NEAR_MISSES) {
    it(`refuses a token that is ${what} with 401 and stores nothing`, async () => {
      const read = await api.get('/api/v1/namespaces/default/configmaps', as(guess))
      assert.equal(read.status, 401)
      assert.equal(read.body.reason, 'Unauthorized')
      const write = await api.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'guessed' } }, as(guess))
      assert.equal(write.status, 401)
      assert.equal((await api.get('/api/v1/namespaces/default/configmaps/guessed', as(OTHER))).status, 404, 'nothing was stored')
    })
  }
})
