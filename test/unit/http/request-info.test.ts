import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseRequestInfo, pathOfUrl } from '../../../core/machinery/request-info.js'

const cases: [method: string, path: string, expected: Record<string, unknown>][] = [
  ['GET', '/api/v1/namespaces', { verb: 'list', resource: 'namespaces', namespace: '', name: '', apiGroup: '' }],
  ['GET', '/api/v1/namespaces/team', { verb: 'get', resource: 'namespaces', name: 'team', namespace: 'team' }],
  ['GET', '/api/v1/namespaces/team/status', { verb: 'get', resource: 'namespaces', subresource: 'status', name: 'team' }],
  ['PUT', '/api/v1/namespaces/team/finalize', { verb: 'update', resource: 'namespaces', subresource: 'finalize' }],
  ['GET', '/api/v1/namespaces/default/configmaps', { verb: 'list', resource: 'configmaps', namespace: 'default' }],
  ['GET', '/api/v1/namespaces/default/configmaps?watch=true', { verb: 'watch', resource: 'configmaps' }],
  ['GET', '/api/v1/namespaces/default/configmaps?watch=0', { verb: 'list' }],
  ['GET', '/api/v1/watch/namespaces/default/configmaps', { verb: 'watch', resource: 'configmaps', namespace: 'default' }],
  ['GET', '/api/v1/configmaps', { verb: 'list', resource: 'configmaps', namespace: '' }],
  ['POST', '/api/v1/namespaces/default/configmaps', { verb: 'create', resource: 'configmaps', name: '' }],
  ['GET', '/api/v1/namespaces/default/configmaps/cfg', { verb: 'get', name: 'cfg' }],
  ['PUT', '/api/v1/namespaces/default/configmaps/cfg', { verb: 'update', name: 'cfg' }],
  ['PATCH', '/api/v1/namespaces/default/configmaps/cfg', { verb: 'patch', name: 'cfg' }],
  ['DELETE', '/api/v1/namespaces/default/configmaps/cfg', { verb: 'delete', name: 'cfg' }],
  ['DELETE', '/api/v1/namespaces/default/configmaps', { verb: 'deletecollection', name: '' }],
  [
    'GET',
    '/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dweb',
    { verb: 'list', name: 'web', resource: 'pods' },
  ],
  // The name the selector selects: its value unescaped, the first of the name's terms in text order, none when it does not read.
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name==web')}`, { name: 'web' }],
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name=a\\,b')}`, { name: 'a,b' }],
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name=a\\\\b')}`, { name: 'a\\b' }],
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name=web,metadata.name=api')}`, { name: 'api' }],
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name= web')}`, { name: ' web' }],
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name!=web')}`, { name: '' }],
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name=a\\b')}`, { name: '' }],
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name=a/b')}`, { name: '' }],
  ['GET', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name=..')}`, { name: '' }],
  ['DELETE', `/api/v1/namespaces/default/pods?fieldSelector=${encodeURIComponent('metadata.name=web')}`, { verb: 'deletecollection', name: '' }],
  [
    'GET',
    '/apis/apps/v1/namespaces/default/deployments/web/scale',
    { verb: 'get', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments', name: 'web', subresource: 'scale' },
  ],
  ['POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { verb: 'create', apiGroup: 'authorization.k8s.io' }],
  ['GET', '/api/v1/namespaces/default/pods/web/log', { verb: 'get', subresource: 'log' }],
]

describe('request info', () => {
  for (const [method, path, expected] of cases) {
    it(`reads ${method} ${path}`, () => {
      const info = parseRequestInfo(method, new URL(`https://h${path}`))
      assert.equal(info.isResourceRequest, true)
      for (const [k, v] of Object.entries(expected)) assert.equal(info[k as keyof typeof info], v, k)
    })
  }

  for (const path of ['/', '/healthz', '/version', '/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/openapi/v3']) {
    it(`treats GET ${path} as a non-resource request with the method as verb`, () => {
      const info = parseRequestInfo('GET', new URL(`https://h${path}`))
      assert.equal(info.isResourceRequest, false)
      assert.equal(info.verb, 'get')
      assert.equal(info.path, path)
    })
  }
})

describe('the path of a request URL', () => {
  it('is the path new URL() finds, for the URLs a Request serializes', () => {
    const urls = [
      'https://127.0.0.1:6443/api/v1/namespaces/default/configmaps/cm-1',
      'https://127.0.0.1:6443/api/v1/namespaces/default/configmaps?limit=10&continue=a%2Fb',
      'http://in-process/apis/apps/v1/deployments?watch=1#frag',
      'http://in-process/',
      'http://in-process',
      'http://in-process?x=/y',
      'http://[::1]:8080/api/v1/pods/%2e%2E/x?y',
      'http://h/a b/<c>/%zz/é?q=/',
      'http://h/a?b#c/d',
      'http://h/a#b?c',
    ]
    for (const text of urls) {
      const url = new Request(text).url
      assert.equal(pathOfUrl(url), new URL(url).pathname, url)
    }
    // As a runtime may pass them on unserialized: escaped dots are dot segments to the URL parser.
    for (const url of ['https://h/api/v1/%2e%2E/namespaces', 'https://h/a/%2E/b?c=%2e', 'https://h/a/.%2e/b']) {
      assert.equal(pathOfUrl(url), new URL(url).pathname, url)
    }
  })
})
