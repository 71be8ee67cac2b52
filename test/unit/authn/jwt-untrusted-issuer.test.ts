/**
 * The issuer a JWT claims, read without checking anything, picks the one
 * authenticator of that issuer, as upstream's untrustedIssuer: Google's
 * tokens that name their issuer without the scheme go to Google's.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { untrustedIssuer } from '../../../core/authn/jwt/verify.js'

const part = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url')
const jwt = (claims: unknown) => `${part({ alg: 'RS256' })}.${part(claims)}.c2ln`

describe('untrustedIssuer', () => {
  it('reads the iss claim of a compact JWT, non-ASCII text included', () => {
    assert.equal(untrustedIssuer(jwt({ iss: 'https://issuer.example/é' })), 'https://issuer.example/é')
  })

  it("takes Google's issuer without its scheme for Google's", () => {
    assert.equal(untrustedIssuer(jwt({ iss: 'accounts.google.com' })), 'https://accounts.google.com')
    assert.equal(untrustedIssuer(jwt({ iss: 'issuer.example' })), 'issuer.example')
  })

  it('finds none in what is not a JWT with a string issuer', () => {
    for (const token of ['opaque-token', 'a.b', `${part({})}.${part({ iss: 7 })}.x`, `${part({})}.not*base64.x`, `${part({})}.${part('just text')}.x`]) {
      assert.equal(untrustedIssuer(token), undefined, token)
    }
  })
})
