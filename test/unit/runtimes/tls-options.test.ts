import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CipherSuiteError, minTlsVersion, opensslCipherList } from '../../../runtimes/node/adapter/tls-options.js'

describe('--tls-cipher-suites in OpenSSL terms', () => {
  it('maps Go names to OpenSSL names and keeps the TLS 1.3 defaults when none is named', () => {
    assert.equal(
      opensslCipherList(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_CBC_SHA']),
      'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA',
    )
  })

  it('keeps only the TLS 1.3 suites named, and writes a suite Go names twice once', () => {
    assert.equal(
      opensslCipherList(['TLS_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256']),
      'TLS_AES_128_GCM_SHA256:ECDHE-RSA-CHACHA20-POLY1305',
    )
  })

  it('leaves the runtime defaults for an empty list and refuses an unknown name', () => {
    assert.equal(opensslCipherList([]), undefined)
    assert.throws(() => opensslCipherList(['TLS_MADE_UP']), CipherSuiteError)
  })

  it('maps --tls-min-version, TLS 1.2 when blank', () => {
    assert.equal(minTlsVersion('VersionTLS13'), 'TLSv1.3')
    assert.equal(minTlsVersion('VersionTLS10'), 'TLSv1')
    assert.equal(minTlsVersion(''), 'TLSv1.2')
  })
})
