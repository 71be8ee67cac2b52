import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  boundTokenClaims,
  readTokenClaims,
  sortedJson,
  splitServiceAccountUsername,
} from '../../../core/authn/serviceaccount/claims.js'

const base = {
  issuer: 'https://issuer.example',
  serviceAccount: { namespace: 'ns', name: 'robot', uid: 'sa-uid' },
  audiences: ['api'],
  expirationSeconds: 3600,
  warnAfterSeconds: 0,
  now: new Date('2030-01-01T00:00:00.500Z'),
  jti: 'id-1',
}
const NOW = Date.parse('2030-01-01T00:00:00Z') / 1000

describe('bound token claims', () => {
  it("writes upstream's claims for a token bound to nothing but its service account", () => {
    assert.deepEqual(boundTokenClaims(base), {
      iss: 'https://issuer.example',
      sub: 'system:serviceaccount:ns:robot',
      aud: ['api'],
      exp: NOW + 3600,
      iat: NOW,
      nbf: NOW,
      jti: 'id-1',
      'kubernetes.io': { namespace: 'ns', serviceaccount: { name: 'robot', uid: 'sa-uid' } },
    })
  })

  it('names the pod and its node, leaving out the uid of a node that does not exist', () => {
    const claims = boundTokenClaims({ ...base, pod: { name: 'web', uid: 'pod-uid' }, node: { name: 'n1', uid: '' } })
    assert.deepEqual(claims['kubernetes.io']?.pod, { name: 'web', uid: 'pod-uid' })
    assert.deepEqual(claims['kubernetes.io']?.node, { name: 'n1' })
  })

  it('sets warnafter only for an extended token', () => {
    assert.equal(boundTokenClaims({ ...base, warnAfterSeconds: 3607 })['kubernetes.io']?.warnafter, NOW + 3607)
    assert.equal('warnafter' in (boundTokenClaims(base)['kubernetes.io'] ?? {}), false)
  })

  it('leaves out aud when there are no audiences', () => {
    assert.equal('aud' in boundTokenClaims({ ...base, audiences: [] }), false)
  })

  it('refuses to bind one token to a secret and a pod', () => {
    assert.throws(() => boundTokenClaims({ ...base, secret: { name: 's', uid: '1' }, pod: { name: 'p', uid: '2' } }), /can only be bound to one object type/)
  })

  it('serializes with every key sorted, as Go writes the map', () => {
    const text = sortedJson(boundTokenClaims({ ...base, pod: { name: 'web', uid: 'u' }, node: { name: 'n', uid: 'v' }, warnAfterSeconds: 7 }))
    assert.match(text, /^\{"aud":\["api"\],"exp":\d+,"iat":\d+,"iss":"[^"]+","jti":"id-1","kubernetes.io":\{"namespace":"ns","node":\{"name":"n","uid":"v"\},"pod":\{"name":"web","uid":"u"\},"serviceaccount":\{"name":"robot","uid":"sa-uid"\},"warnafter":\d+\},"nbf":\d+,"sub":"system:serviceaccount:ns:robot"\}$/)
  })
})

describe('reading the claims of a verified token', () => {
  it('takes a single audience written as a string', () => {
    assert.deepEqual(readTokenClaims({ aud: 'api' }).aud, ['api'])
  })

  it('refuses registered claims of the wrong type', () => {
    assert.throws(() => readTokenClaims({ exp: '2030' }), /claim exp is not a number/)
    assert.throws(() => readTokenClaims({ iss: 1 }), /claim iss is not a string/)
    assert.throws(() => readTokenClaims({ aud: [1] }), /claim aud is not a string or a list of strings/)
  })

  it('splits service-account user names and refuses others', () => {
    assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:ns:robot'), { namespace: 'ns', name: 'robot' })
    for (const name of ['system:serviceaccount:ns', 'system:serviceaccount:ns:a:b', 'alice', 'system:serviceaccount::x']) assert.equal(splitServiceAccountUsername(name), undefined)
  })
})
