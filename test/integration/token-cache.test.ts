/**
 * Upstream's token cache in front of every token authenticator
 * (core/authn/token-cache.ts): a service-account token accepted once is
 * accepted again for ten seconds without a lookup, counted in upstream's
 * `authentication_token_cache_*` metrics; a refused token is looked up
 * every time; the server's clock past the ten seconds brings a lookup
 * again, which then sees what changed (a deleted service account).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { TOKEN_SUCCESS_CACHE_TTL_MS } from '../../core/authn/token-cache.js'
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js'
import { create, ecKeyPem, issueToken, network, type TokenServer, tokenServer } from './service-account-fixtures.js'

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'

describe('the token cache', () => {
  let s: TokenServer

  before(async () => {
    s = await tokenServer({ authentication: { serviceAccounts: { signingKey: ecKeyPem().privateKey } } })
  })
  after(() => s?.shutdown())

  const asBearer = (token: string) => ({ connection: network, headers: { authorization: `Bearer ${token}` } })
  const figures = async (): Promise<{ hits: number; misses: number; ok: number; errors: number; hitDurations: number }> => {
    const families = parsePrometheusText((await s.api.get('/metrics')).text)
    const value = (name: string, status: string) => sampleValue(families, name, { status }) ?? 0
    return {
      hits: value('authentication_token_cache_request_total', 'hit'),
      misses: value('authentication_token_cache_request_total', 'miss'),
      ok: value('authentication_token_cache_fetch_total', 'ok'),
      errors: value('authentication_token_cache_fetch_total', 'error'),
      hitDurations: value('authentication_token_cache_request_duration_seconds_count', 'hit'),
    }
  }

  it('looks a service-account token up once in ten seconds, and again after them, when a deleted account refuses it', async () => {
    await create(s.api, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'cached' } })
    const token = await issueToken(s.api, 'default', 'cached')
    const before = await figures()
    for (let i = 0; i < 3; i++) assert.equal((await s.api.get(CONFIGMAPS, asBearer(token))).status, 200)
    const during = await figures()
    assert.equal(during.misses - before.misses, 1)
    assert.equal(during.ok - before.ok, 1, 'one lookup')
    assert.equal(during.hits - before.hits, 2)
    assert.equal(during.hitDurations - before.hitDurations, 2)

    assert.equal((await s.api.delete('/api/v1/namespaces/default/serviceaccounts/cached')).status, 200)
    s.advance(TOKEN_SUCCESS_CACHE_TTL_MS)
    const refused = await s.api.post(CONFIGMAPS, { metadata: { name: 'by-a-deleted-account' } }, asBearer(token))
    assert.equal(refused.status, 401, refused.text)
    assert.equal((await s.api.get(`${CONFIGMAPS}/by-a-deleted-account`)).status, 404)
    const later = await figures()
    assert.equal(later.misses - during.misses, 1)
    assert.equal(later.errors - during.errors, 1, 'looked up again, and refused')
  })

  it('looks a refused token up every time', async () => {
    const before = await figures()
    for (let i = 0; i < 3; i++) assert.equal((await s.api.get(CONFIGMAPS, asBearer('not.a.token'))).status, 401)
    const after = await figures()
    assert.equal(after.misses - before.misses, 3)
    assert.equal(after.hits - before.hits, 0)
  })

  it('files a token apart for each set of audiences a TokenReview asks about', async () => {
    const token = await issueToken(s.api, 'default', 'default', { audiences: ['vault'] })
    const review = (audiences: string[]) =>
      s.api.post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences } })
    const vault = await review(['vault'])
    assert.equal(vault.body.status.authenticated, true, vault.text)
    assert.deepEqual(vault.body.status.audiences, ['vault'])
    // Accepted for vault and kept: asked for another audience it is looked up, and refused.
    const other = await review(['other'])
    assert.equal(other.body.status.authenticated, undefined, other.text)
    assert.equal((await review(['vault'])).body.status.authenticated, true)
  })
})
