import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseGoUrl } from '../../../core/config/go-url.js'

describe("URLs read as Go's url.Parse reads them", () => {
  it('splits scheme, host, path, query and fragment, unescaping the path', () => {
    assert.deepEqual(parseGoUrl('HTTPS://user@authz.example:8443/a%2Fb?x=1#frag'), {
      scheme: 'https',
      opaque: '',
      userinfo: 'user',
      host: 'authz.example:8443',
      path: '/a/b',
      rawQuery: 'x=1',
      fragment: 'frag',
    })
  })

  it('takes host:port for scheme and opaque data, as Go does', () => {
    assert.deepEqual(parseGoUrl('localhost:4317'), { scheme: 'localhost', opaque: '4317', host: '', path: '', rawQuery: '', fragment: '' })
  })

  it('reads a unix socket URL: the host part is not part of the path', () => {
    assert.equal(parseGoUrl('unix:///var/run/kms.sock').path, '/var/run/kms.sock')
    assert.deepEqual([parseGoUrl('unix://var/run/kms.sock').host, parseGoUrl('unix://var/run/kms.sock').path], ['var', '/run/kms.sock'])
  })

  const refused: [string, string][] = [
    [':4317', 'parse ":4317": missing protocol scheme'],
    ['dn%2s://localhost:4317', 'parse "dn%2s://localhost:4317": first path segment in URL cannot contain colon'],
    ['http://[::1/x', `parse "http://[::1/x": missing ']' in host`],
    ['http://host:port/', 'parse "http://host:port/": invalid port ":port" after host'],
    ['http://a host/', 'parse "http://a host/": invalid character " " in host name'],
    ['http://a b@host/', 'parse "http://a b@host/": net/url: invalid userinfo'],
    ['http://host/%zz', 'parse "http://host/%zz": invalid URL escape "%zz"'],
    ['http://host/\u0007', 'parse "http://host/\\u0007": net/url: invalid control character in URL'],
  ]
  for (const [url, message] of refused) {
    it(`refuses ${JSON.stringify(url)} with Go's words`, () => assert.throws(() => parseGoUrl(url), { name: 'GoUrlError', message }))
  }
})
