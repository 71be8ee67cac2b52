/**
 * The request metrics' labels for the cases the integration tests do not
 * reach: the verb of a `/watch/` path, of HEAD on a collection, of a method
 * upstream does not report, of an apply patch whose content type carries a
 * parameter; the scope of a route against the request info's; dryRun values.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseRequestInfo } from '../../../core/machinery/request-info.js'
import { cleanDryRun, cleanScope, normalizedVerb, reportedVerb, routeScope } from '../../../core/metrics/request-labels.js'

function labels(method: string, path: string, headers: Record<string, string> = {}) {
  const url = new URL(`http://in-process${path}`)
  const request = new Request(url, { method, headers })
  const info = parseRequestInfo(method, url)
  const scope = routeScope(info, method)
  return { verb: reportedVerb(info, request, scope, url.searchParams), scope, logVerb: normalizedVerb(info, request, cleanScope(info), url.searchParams) }
}

describe('request metric labels', () => {
  it('reports a /watch/ path and ?watch= as WATCH, whatever the route', () => {
    assert.deepEqual(labels('GET', '/api/v1/watch/namespaces/default/configmaps'), { verb: 'WATCH', scope: 'namespace', logVerb: 'WATCH' })
    assert.deepEqual(labels('GET', '/api/v1/namespaces/default/configmaps/one?watch=true'), { verb: 'WATCH', scope: 'resource', logVerb: 'WATCH' })
    assert.equal(labels('GET', '/api/v1/configmaps?watch=false').verb, 'LIST')
  })

  it('reports HEAD as GET or LIST and a method upstream does not know as other (the log line keeps it)', () => {
    assert.equal(labels('HEAD', '/api/v1/namespaces/default/configmaps').verb, 'LIST')
    assert.equal(labels('HEAD', '/api/v1/namespaces/default/configmaps/one').verb, 'GET')
    assert.deepEqual(labels('OPTIONS', '/api/v1/namespaces/default/configmaps'), { verb: 'other', scope: 'namespace', logVerb: 'OPTIONS' })
  })

  it('reports APPLY only for the exact apply content type, as upstream compares it', () => {
    assert.equal(labels('PATCH', '/api/v1/namespaces/default/configmaps/one', { 'content-type': 'application/apply-patch+yaml' }).verb, 'APPLY')
    assert.equal(labels('PATCH', '/api/v1/namespaces/default/configmaps/one', { 'content-type': 'application/merge-patch+json' }).verb, 'PATCH')
  })

  it('reports the connect subresources as CONNECT, a POST to a collection in resource scope', () => {
    assert.equal(labels('POST', '/api/v1/namespaces/default/pods/p/exec?command=ls').verb, 'CONNECT')
    assert.equal(labels('GET', '/api/v1/namespaces/default/services/s/proxy/some/path').verb, 'CONNECT')
    assert.deepEqual(labels('POST', '/api/v1/namespaces/default/configmaps'), { verb: 'POST', scope: 'resource', logVerb: 'POST' })
    assert.deepEqual(labels('DELETE', '/apis/apps/v1/namespaces/default/deployments'), { verb: 'DELETE', scope: 'namespace', logVerb: 'DELETE' })
  })

  it('takes a list by field selector on the name as a LIST of its route, while the request info names the object', () => {
    const path = '/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Done'
    const url = new URL(`http://in-process${path}`)
    const info = parseRequestInfo('GET', url)
    assert.equal(routeScope(info, 'GET'), 'namespace')
    assert.equal(cleanScope(info), 'resource')
    assert.equal(labels('GET', path).verb, 'LIST')
  })

  it('joins distinct dryRun values, sorted, and calls any other value invalid', () => {
    assert.equal(cleanDryRun(new URLSearchParams('')), '')
    assert.equal(cleanDryRun(new URLSearchParams('dryRun=All&dryRun=All')), 'All')
    assert.equal(cleanDryRun(new URLSearchParams('dryRun=All&dryRun=')), 'invalid')
    assert.equal(cleanDryRun(new URLSearchParams('dryRun=all')), 'invalid')
  })
})
