import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newAuthNotes } from '../../../core/authn/authenticator.js'
import type { TokenAuthenticator, TokenAuthResult } from '../../../core/authn/bearer-token.js'
import { cachedTokenAuthenticator } from '../../../core/authn/token-cache.js'

/** Token authenticators the cache is put in front of, counting what they are asked and answering when told. */
function counted(answer: (token: string) => Promise<TokenAuthResult>): TokenAuthenticator & { asked: number } {
  const inner = {
    asked: 0,
    async authenticateToken(token: string, _audiences?: readonly string[], notes?: { annotations: Record<string, string>; warnings: string[] }) {
      inner.asked++
      if (notes) {
        notes.annotations['example.com/seen'] = token
        notes.warnings.push(`299 - "about ${token}"`)
      }
      return answer(token)
    },
  }
  return inner
}

const user = { username: 'jane', groups: [] }

describe('the token cache', () => {
  it('gives a kept answer again with the annotations and warnings of its lookup, until its time is up', async () => {
    let now = 0
    const inner = counted(async () => ({ user }))
    const cache = cachedTokenAuthenticator(inner, { now: () => now, successTtlMs: 1000 })
    for (let i = 0; i < 2; i++) {
      const notes = newAuthNotes()
      assert.deepEqual(await cache.authenticateToken('t', undefined, notes), { user })
      assert.deepEqual(notes, { annotations: { 'example.com/seen': 't' }, warnings: ['299 - "about t"'] })
    }
    assert.equal(inner.asked, 1)
    now = 1000
    await cache.authenticateToken('t')
    assert.equal(inner.asked, 2)
  })

  it('keeps nothing that a lookup begun before clear() brings back', async () => {
    let release!: () => void
    const inner = counted(() => new Promise((resolve) => (release = () => resolve({ user }))))
    const cache = cachedTokenAuthenticator(inner, { now: () => 0 })
    const first = cache.authenticateToken('t')
    await new Promise((resolve) => setImmediate(resolve))
    cache.clear()
    release()
    assert.deepEqual(await first, { user })
    const second = cache.authenticateToken('t')
    await new Promise((resolve) => setImmediate(resolve))
    release()
    await second
    assert.equal(inner.asked, 2, 'asked again after clear()')
  })

  it('hands a failed lookup to every request that waited for it, and asks again next time', async () => {
    let fail!: (err: Error) => void
    const inner = counted(() => new Promise((_, reject) => (fail = reject)))
    const cache = cachedTokenAuthenticator(inner, { now: () => 0 })
    const waiting = [cache.authenticateToken('t'), cache.authenticateToken('t')]
    await new Promise((resolve) => setImmediate(resolve))
    fail(new Error('the issuer is down'))
    for (const request of waiting) await assert.rejects(request, /the issuer is down/)
    assert.equal(inner.asked, 1)
    const again = cache.authenticateToken('t')
    await new Promise((resolve) => setImmediate(resolve))
    fail(new Error('still down'))
    await assert.rejects(again, /still down/)
    assert.equal(inner.asked, 2)
  })

  it("hands out a kept user frozen, so that no request changes the next one's", async () => {
    const inner = counted(async () => ({ user: { username: 'jane', groups: ['dev'], extra: { scopes: ['a'] } } }))
    const cache = cachedTokenAuthenticator(inner, { now: () => 0 })
    const result = await cache.authenticateToken('t')
    assert.ok(result && 'user' in result)
    assert.throws(() => result.user.groups.push('system:masters'), TypeError)
    assert.throws(() => result.user.extra!['scopes']!.push('b'), TypeError)
    assert.throws(() => Object.assign(result.user, { username: 'root' }), TypeError)
    const again = await cache.authenticateToken('t')
    assert.deepEqual(again, { user: { username: 'jane', groups: ['dev'], extra: { scopes: ['a'] } } })
  })

  it('keeps nothing with a time of 0', async () => {
    const inner = counted(async () => ({ user }))
    const cache = cachedTokenAuthenticator(inner, { now: () => 0, successTtlMs: 0 })
    await cache.authenticateToken('t')
    await cache.authenticateToken('t')
    assert.equal(inner.asked, 2)
  })
})
