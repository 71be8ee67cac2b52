import assert from 'node:assert/strict'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { describe, it } from 'node:test'
import { loadSigningKey, loadVerificationKeys, namedAlgorithm } from '../../../core/authn/serviceaccount/keys.js'

function pair(type: 'rsa' | 'ec', curve = 'P-256') {
  const p = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: curve })
  const spki = p.publicKey.export({ type: 'spki', format: 'der' })
  return {
    privateKey: p.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: p.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    // Upstream's key id: unpadded base64url of the SHA-256 of the PKIX DER public key.
    kid: createHash('sha256').update(spki).digest('base64url'),
  }
}

describe('service-account keys', () => {
  it("signs RS256 with an RSA key and ES256/384/512 by curve, each with upstream's key id", async () => {
    for (const [key, alg] of [
      [pair('rsa'), 'RS256'],
      [pair('ec', 'P-256'), 'ES256'],
      [pair('ec', 'P-384'), 'ES384'],
      [pair('ec', 'P-521'), 'ES512'],
    ] as const) {
      const signing = await loadSigningKey(key.privateKey)
      assert.equal(signing.alg, alg)
      assert.equal(signing.kid, key.kid)
      const [verifying] = await loadVerificationKeys([key.publicKey])
      assert.equal(verifying?.kid, key.kid)
    }
  })

  it("names a key's algorithm from its DER, private or public, and nothing for another kind or broken DER", () => {
    const der = (key: ReturnType<typeof generateKeyPairSync>) => ({
      pkcs8: new Uint8Array(key.privateKey.export({ type: 'pkcs8', format: 'der' })),
      spki: new Uint8Array(key.publicKey.export({ type: 'spki', format: 'der' })),
    })
    for (const [key, alg] of [
      [generateKeyPairSync('rsa', { modulusLength: 1024 }), 'RS256'],
      [generateKeyPairSync('ec', { namedCurve: 'P-256' }), 'ES256'],
      [generateKeyPairSync('ec', { namedCurve: 'P-384' }), 'ES384'],
      [generateKeyPairSync('ec', { namedCurve: 'P-521' }), 'ES512'],
      // Upstream signs with none of these: the import tries each algorithm and refuses them.
      [generateKeyPairSync('ec', { namedCurve: 'secp256k1' }), undefined],
      [generateKeyPairSync('ed25519'), undefined],
      [generateKeyPairSync('rsa-pss', { modulusLength: 1024 }), undefined],
    ] as const) {
      const { pkcs8, spki } = der(key)
      assert.equal(namedAlgorithm(pkcs8, 'pkcs8'), alg)
      assert.equal(namedAlgorithm(spki, 'spki'), alg)
      // Each form read as the other, or cut short anywhere, names nothing (and never reads past the end).
      assert.equal(namedAlgorithm(pkcs8, 'spki'), undefined)
      assert.equal(namedAlgorithm(spki, 'pkcs8'), undefined)
      for (let cut = 0; cut < 40; cut++) assert.equal(namedAlgorithm(spki.subarray(0, cut), 'spki'), undefined)
    }
    assert.equal(namedAlgorithm(new Uint8Array([0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), 'spki'), undefined)
  })

  it('reads every key of a file, public or private', async () => {
    const a = pair('ec')
    const b = pair('rsa')
    const keys = await loadVerificationKeys([a.publicKey + b.privateKey])
    assert.deepEqual(
      keys.map((k) => k.kid),
      [a.kid, b.kid],
    )
  })

  it('verifies only the algorithms its key type allows: never none, HMAC, or another curve', async () => {
    const [rsa] = await loadVerificationKeys([pair('rsa').publicKey])
    const [ec] = await loadVerificationKeys([pair('ec').publicKey])
    for (const alg of ['none', 'HS256', 'ES256']) assert.equal(rsa?.verifierFor(alg), undefined)
    for (const alg of ['RS256', 'PS512']) assert.ok(rsa?.verifierFor(alg))
    for (const alg of ['none', 'HS256', 'RS256', 'ES384']) assert.equal(ec?.verifierFor(alg), undefined)
    assert.ok(ec?.verifierFor('ES256'))
  })

  it('refuses a text with no key, and a signing text without a PKCS#8 private key', async () => {
    await assert.rejects(loadVerificationKeys(['nothing here']), /data does not contain any valid RSA or ECDSA public keys/)
    await assert.rejects(loadSigningKey(pair('ec').publicKey), /no PKCS#8 "PRIVATE KEY" block found/)
  })
})
