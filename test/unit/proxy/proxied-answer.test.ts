/**
 * Upstream's proxy transport's rewriting, case by case: redirects of the
 * backend to its own paths go back through the proxy, others are left as
 * they are; X-Forwarded-For gains the client; backend CORS headers go.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { appendForwardedFor, forwardedUri, proxiedAnswer, rewriteLocation } from '../../../core/proxy/proxied-answer.js'

const context = { proxyPrefix: '/api/v1/namespaces/ns/services/web:80/proxy', backendHost: '10.0.0.5:8080', requestHost: 'localhost:8001' }

describe('proxied redirects', () => {
  it('sends a redirect to a path of the backend back through the proxy, scheme and host dropped', () => {
    assert.equal(rewriteLocation('/login?next=%2F#top', context), '/api/v1/namespaces/ns/services/web:80/proxy/login?next=%2F#top')
    assert.equal(rewriteLocation('http://10.0.0.5:8080/a/b/', context), '/api/v1/namespaces/ns/services/web:80/proxy/a/b/')
    assert.equal(rewriteLocation('//10.0.0.5:8080/x', context), '/api/v1/namespaces/ns/services/web:80/proxy/x')
    assert.equal(rewriteLocation('/', context), '/api/v1/namespaces/ns/services/web:80/proxy/')
  })

  it("keeps the API server's own scheme and host, and a path already through the proxy", () => {
    assert.equal(rewriteLocation('https://localhost:8001/x', context), 'https://localhost:8001/api/v1/namespaces/ns/services/web:80/proxy/x')
    assert.equal(rewriteLocation('/api/v1/namespaces/ns/services/web:80/proxy/y', context), '/api/v1/namespaces/ns/services/web:80/proxy/y')
  })

  it('leaves another host, a relative path and a scheme without a host as they are', () => {
    for (const location of ['https://example.com/x', '//example.com/x', 'next/page', '../up', 'mailto:someone@example.com', '?q=1']) {
      assert.equal(rewriteLocation(location, context), location)
    }
  })

  it("names the transport's origin when it was given one, as the aggregator's is", () => {
    const aggregator = { proxyPrefix: '', backendHost: '10.0.0.9:443', requestHost: 'api.example:6443', transportOrigin: 'https://10.0.0.9:443' }
    assert.equal(rewriteLocation('/apis/x/v1/y', aggregator), 'https://10.0.0.9:443/apis/x/v1/y')
    assert.equal(rewriteLocation('https://api.example:6443/z', aggregator), 'https://10.0.0.9:443/z')
    assert.equal(rewriteLocation('https://elsewhere.example/steal', aggregator), 'https://elsewhere.example/steal')
  })

  it('rewrites the answer only when it has a Location or CORS headers', async () => {
    const plain = new Response('body', { headers: { 'content-type': 'text/plain' } })
    assert.equal(proxiedAnswer(plain, context), plain)
    const answer = proxiedAnswer(
      new Response('moved', {
        status: 302,
        headers: { location: '/next', 'access-control-allow-origin': 'https://evil.example', 'access-control-allow-credentials': 'true', 'x-kept': '1' },
      }),
      context,
    )
    assert.equal(answer.status, 302)
    assert.equal(answer.headers.get('location'), '/api/v1/namespaces/ns/services/web:80/proxy/next')
    assert.equal(answer.headers.get('access-control-allow-origin'), null)
    assert.equal(answer.headers.get('access-control-allow-credentials'), null)
    assert.equal(answer.headers.get('x-kept'), '1')
    assert.equal(await answer.text(), 'moved')
  })
})

describe('forwarded headers', () => {
  it("appends the client's address to what it sent, unmapped as Go names it", () => {
    const headers = new Headers()
    appendForwardedFor(headers, '::ffff:192.0.2.7')
    assert.equal(headers.get('x-forwarded-for'), '192.0.2.7')
    appendForwardedFor(headers, '2001:db8::1')
    assert.equal(headers.get('x-forwarded-for'), '192.0.2.7, 2001:db8::1')
    const embedded = new Headers({ 'x-forwarded-for': 'kept' })
    appendForwardedFor(embedded, undefined)
    assert.equal(embedded.get('x-forwarded-for'), 'kept')
  })

  it('names the path the client asked for, its trailing slash kept', () => {
    assert.equal(forwardedUri(context.proxyPrefix, '/a/b'), '/api/v1/namespaces/ns/services/web:80/proxy/a/b')
    assert.equal(forwardedUri(context.proxyPrefix, '/'), '/api/v1/namespaces/ns/services/web:80/proxy/')
  })
})
