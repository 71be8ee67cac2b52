import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parse as parseYaml } from 'yaml'
import { ConfigFileError, problemText } from '../../../core/config/decode.js'
import { loadKubeconfigConnection } from '../../../core/config/kubeconfig.js'
import { buildKubeconfig } from '../../../core/pki/kubeconfig.js'

const SOURCE = '/etc/platform/authz-webhook.kubeconfig'

interface Parts {
  cluster?: Record<string, unknown>
  user?: Record<string, unknown>
  context?: Record<string, unknown>
  extra?: Record<string, unknown>
}

/** A kubeconfig with one cluster `c`, one user `u` and the current context `ctx` joining them. */
function kubeconfig({ cluster = {}, user = {}, context = {}, extra = {} }: Parts = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://authz.example:8443/authorize', ...cluster } }],
    users: [{ name: 'u', user: { token: 's3cret', ...user } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', ...context } }],
    'current-context': 'ctx',
    ...extra,
  })
}

function problems(text: string): string[] {
  try {
    loadKubeconfigConnection(text, SOURCE)
  } catch (err) {
    assert.ok(err instanceof ConfigFileError, String(err))
    return err.problems.map(problemText)
  }
  return []
}

const PEM = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64')

const cases: { rule: string; bad: string; problem: string | string[]; good: string }[] = [
  {
    rule: 'a context is chosen',
    bad: kubeconfig({ extra: { 'current-context': '' } }),
    problem: 'no context chosen',
    good: kubeconfig(),
  },
  {
    rule: 'the current context exists',
    bad: kubeconfig({ extra: { 'current-context': 'other' } }),
    problem: 'context was not found for specified context: other',
    good: kubeconfig(),
  },
  {
    rule: 'the context names a user',
    bad: kubeconfig({ context: { user: '' } }),
    problem: 'user was not specified for context "ctx"',
    good: kubeconfig(),
  },
  {
    rule: 'the context names an existing user',
    bad: kubeconfig({ context: { user: 'nobody' } }),
    problem: 'user "nobody" was not found for context "ctx"',
    good: kubeconfig({ context: { user: 'u' } }),
  },
  {
    rule: 'the context names an existing cluster',
    bad: kubeconfig({ context: { cluster: 'elsewhere' } }),
    // client-go goes on to check the missing cluster as an empty one.
    problem: ['cluster "elsewhere" was not found for context "ctx"', 'cluster has no server defined'],
    good: kubeconfig({ context: { cluster: 'c' } }),
  },
  {
    rule: "the context's namespace is a DNS label",
    bad: kubeconfig({ context: { namespace: 'Team_A' } }),
    problem: 'namespace "Team_A" for context "ctx" does not conform to the kubernetes DNS_LABEL rules',
    good: kubeconfig({ context: { namespace: 'team-a' } }),
  },
  {
    rule: 'the cluster has a server',
    bad: kubeconfig({ cluster: { server: '', 'insecure-skip-tls-verify': true } }),
    problem: 'no server found for cluster "c"',
    good: kubeconfig({ cluster: { 'insecure-skip-tls-verify': true } }),
  },
  {
    rule: 'the server is an http or https URL',
    bad: kubeconfig({ cluster: { server: 'ftp://authz.example/' } }),
    problem: 'unsupported protocol scheme "ftp" in server "ftp://authz.example/"',
    good: kubeconfig({ cluster: { server: 'http://127.0.0.1:9000/authorize' } }),
  },
  {
    rule: 'the server parses as a URL',
    bad: kubeconfig({ cluster: { server: 'https://authz example/' } }),
    problem: 'parse "https://authz example/": invalid character " " in host name',
    good: kubeconfig({ cluster: { server: 'https://authz.example/' } }),
  },
  {
    rule: 'the CA is given inline or as a file, not both',
    bad: kubeconfig({ cluster: { 'certificate-authority': 'ca.pem', 'certificate-authority-data': PEM } }),
    problem: 'certificate-authority-data and certificate-authority are both specified for c. certificate-authority-data will override.',
    good: kubeconfig({ cluster: { 'certificate-authority-data': PEM } }),
  },
  {
    rule: 'a CA and insecure-skip-tls-verify do not go together',
    bad: kubeconfig({ cluster: { 'certificate-authority': 'ca.pem', 'insecure-skip-tls-verify': true } }),
    problem: 'specifying a root certificates file with the insecure flag is not allowed',
    good: kubeconfig({ cluster: { 'insecure-skip-tls-verify': true } }),
  },
  {
    rule: 'the proxy is an http, https or socks5 URL',
    bad: kubeconfig({ cluster: { 'proxy-url': 'ftp://proxy:21' } }),
    problem: `invalid 'proxy-url' "ftp://proxy:21" for cluster "c": unsupported scheme "ftp", must be http, https, or socks5`,
    good: kubeconfig({ cluster: { 'proxy-url': 'socks5://proxy:1080' } }),
  },
  {
    rule: 'a client certificate comes with its key',
    bad: kubeconfig({ user: { token: '', 'client-certificate': 'client.pem' } }),
    problem: 'client-key-data or client-key must be specified for u to use the clientCert authentication method.',
    good: kubeconfig({ user: { token: '', 'client-certificate': 'client.pem', 'client-key': 'client-key.pem' } }),
  },
  {
    rule: 'a client key comes with its certificate',
    bad: kubeconfig({ user: { token: '', 'client-key': 'client-key.pem' } }),
    problem: 'client-cert-data or client-cert must be specified for u to use the clientCert authentication method.',
    good: kubeconfig({ user: { token: '', 'client-certificate-data': PEM, 'client-key-data': PEM } }),
  },
  {
    rule: 'the client certificate is given inline or as a file, not both',
    bad: kubeconfig({ user: { 'client-certificate': 'c.pem', 'client-certificate-data': PEM, 'client-key': 'k.pem' } }),
    problem: 'client-cert-data and client-cert are both specified for u. client-cert-data will override.',
    good: kubeconfig({ user: { 'client-certificate-data': PEM, 'client-key': 'k.pem' } }),
  },
  {
    rule: 'one authentication method: a token or a user name and password',
    bad: kubeconfig({ user: { username: 'admin', password: 'pw' } }),
    problem: 'more than one authentication method found for u; found [token basicAuth], only one is allowed',
    good: kubeconfig({ user: { token: '', username: 'admin', password: 'pw' } }),
  },
  {
    rule: 'impersonated groups need an impersonated user',
    bad: kubeconfig({ user: { 'as-groups': ['ops'] } }),
    problem: 'requesting uid, groups or user-extra for u without impersonating a user',
    good: kubeconfig({ user: { as: 'robot', 'as-groups': ['ops'] } }),
  },
  {
    rule: 'no exec credential plugins',
    bad: kubeconfig({ user: { token: '', exec: { command: 'get-token', apiVersion: 'client.authentication.k8s.io/v1' } } }),
    problem: 'exec plugins are not supported for u; use a token, a token file or a client certificate',
    good: kubeconfig({ user: { token: '', tokenFile: '/run/secrets/token' } }),
  },
  {
    rule: 'names are unique in each list',
    bad: JSON.stringify({ ...JSON.parse(kubeconfig()), users: [{ name: 'u', user: { token: 'a' } }, { name: 'u', user: { token: 'b' } }] }),
    problem: 'users[1].name: Duplicate value: "u"',
    good: JSON.stringify({ ...JSON.parse(kubeconfig()), users: [{ name: 'u', user: { token: 'a' } }, { name: 'v', user: { token: 'b' } }] }),
  },
  {
    rule: '*-data fields are standard base64',
    bad: kubeconfig({ cluster: { 'certificate-authority-data': 'not base64!' } }),
    problem: 'clusters[0].cluster.certificate-authority-data: illegal base64 data at input byte 3',
    good: kubeconfig({ cluster: { 'certificate-authority-data': PEM } }),
  },
  {
    rule: 'fields are known',
    bad: kubeconfig({ cluster: { 'insecure-skip-verify': true } }),
    problem: 'unknown field "clusters[0].cluster.insecure-skip-verify"',
    good: kubeconfig({ cluster: { 'insecure-skip-tls-verify': true } }),
  },
  {
    rule: 'apiVersion is v1 when given',
    bad: kubeconfig({ extra: { apiVersion: 'v2' } }),
    problem: 'apiVersion: Unsupported value: "v2": supported values: "v1"',
    good: JSON.stringify({ ...JSON.parse(kubeconfig()), apiVersion: undefined, kind: undefined }),
  },
  {
    rule: 'the file holds a configuration',
    bad: '',
    problem: 'no configuration has been provided',
    good: kubeconfig(),
  },
]

describe('kubeconfig connection file rules', () => {
  for (const c of cases) {
    it(`refuses a file that breaks the rule: ${c.rule}`, () => assert.deepEqual(problems(c.bad), [c.problem].flat()))
    it(`accepts a file that keeps the rule: ${c.rule}`, () => assert.deepEqual(problems(c.good), []))
  }
})

describe('buildKubeconfig', () => {
  it('writes the server and the data plain, as kubeconfigs are usually written', () => {
    const text = buildKubeconfig({ server: 'https://127.0.0.1:6443', certificateAuthority: 'CA PEM', clientCertificate: 'CERT PEM', clientKey: 'KEY PEM' })
    assert.match(text, /^ {6}server: https:\/\/127\.0\.0\.1:6443$/m)
    assert.match(text, /^ {6}client-key-data: [A-Za-z0-9+/=]+$/m)
    assert.match(text, /^current-context: admin@apiserver$/m)
  })

  it('writes YAML that reads back as the document it means, whatever the names hold (as YAML 1.1, which Go reads)', () => {
    for (const awkward of [
      { clusterName: 'a: b #c', userName: 'q"u\\o\nte \u00fc' },
      { clusterName: 'yes', userName: 'null' },
      { clusterName: '1234', userName: 'ends:' },
      { clusterName: '[x]', userName: '-dash' },
    ]) {
      const text = buildKubeconfig({ server: 'https://[::1]:6443', certificateAuthority: 'CA PEM', clientCertificate: 'CERT PEM', clientKey: 'KEY PEM', ...awkward })
      const context = `${awkward.userName}@${awkward.clusterName}`
      assert.deepEqual(parseYaml(text, { version: '1.1' }), {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: awkward.clusterName, cluster: { server: 'https://[::1]:6443', 'certificate-authority-data': btoa('CA PEM') } }],
        users: [{ name: awkward.userName, user: { 'client-certificate-data': btoa('CERT PEM'), 'client-key-data': btoa('KEY PEM') } }],
        contexts: [{ name: context, context: { cluster: awkward.clusterName, user: awkward.userName } }],
        'current-context': context,
        preferences: {},
      })
    }
  })
})

describe('loadKubeconfigConnection', () => {
  it('reads back the kubeconfig the server writes, with the PEM data decoded', () => {
    const text = buildKubeconfig({
      server: 'https://127.0.0.1:6443',
      certificateAuthority: 'CA PEM',
      clientCertificate: 'CERT PEM',
      clientKey: 'KEY PEM',
    })
    const bytes = (s: string) => ({ data: new TextEncoder().encode(s) })
    assert.deepEqual(loadKubeconfigConnection(text, SOURCE), {
      server: 'https://127.0.0.1:6443',
      insecureSkipTLSVerify: false,
      certificateAuthority: bytes('CA PEM'),
      clientCertificate: bytes('CERT PEM'),
      clientKey: bytes('KEY PEM'),
      disableCompression: false,
    })
  })

  it('resolves file references against the directory of the kubeconfig', () => {
    const text = kubeconfig({
      cluster: { 'certificate-authority': 'pki/ca.pem', 'tls-server-name': 'authz.internal' },
      user: { token: '', tokenFile: '../tokens/authz', 'client-certificate': '/abs/client.pem', 'client-key': 'client-key.pem' },
    })
    assert.deepEqual(loadKubeconfigConnection(text, SOURCE), {
      server: 'https://authz.example:8443/authorize',
      tlsServerName: 'authz.internal',
      insecureSkipTLSVerify: false,
      certificateAuthority: { file: '/etc/platform/pki/ca.pem' },
      clientCertificate: { file: '/abs/client.pem' },
      clientKey: { file: '/etc/platform/client-key.pem' },
      tokenFile: '/etc/tokens/authz',
      disableCompression: false,
    })
  })

  it('completes a bare host:port with https when TLS is configured, and http otherwise', () => {
    const tls = kubeconfig({ cluster: { server: 'authz.example:8443', 'certificate-authority-data': PEM } })
    assert.equal(loadKubeconfigConnection(tls, SOURCE).server, 'https://authz.example:8443')
    const plain = kubeconfig({ cluster: { server: '127.0.0.1:9000' } })
    assert.equal(loadKubeconfigConnection(plain, SOURCE).server, 'http://127.0.0.1:9000')
  })

  it('returns the token, basic auth and impersonation settings of the user', () => {
    const connection = loadKubeconfigConnection(kubeconfig({ user: { as: 'robot', 'as-uid': '42', 'as-user-extra': { scopes: ['a'] } } }), SOURCE)
    assert.equal(connection.token, 's3cret')
    assert.deepEqual(connection.impersonate, { user: 'robot', uid: '42', groups: [], extra: { scopes: ['a'] } })
    const basic = loadKubeconfigConnection(kubeconfig({ user: { token: '', username: 'admin', password: 'pw' } }), SOURCE)
    assert.deepEqual(basic.basicAuth, { username: 'admin', password: 'pw' })
  })

  it('lists every problem of the current context at once', () => {
    const text = kubeconfig({ context: { user: 'nobody', cluster: 'nowhere' } })
    let message = ''
    try {
      loadKubeconfigConnection(text, SOURCE)
    } catch (err) {
      message = (err as Error).message
    }
    assert.equal(
      message,
      [
        `${SOURCE}: invalid kubeconfig:`,
        '  user "nobody" was not found for context "ctx"',
        '  cluster "nowhere" was not found for context "ctx"',
        '  cluster has no server defined',
      ].join('\n'),
    )
  })
})

describe('kubeconfig secrets in problems', () => {
  const SECRET = 'do-not-print-9f8e7d6c5b4a'
  const DIGITS = 987654321012345
  const withUser = (user: unknown) => kubeconfig({ extra: { users: [{ name: 'u', user }] } })
  const cases: { given: string; text: string; problem: string }[] = [
    { given: 'client-key-data as a list', text: withUser({ 'client-key-data': [SECRET] }), problem: 'users[0].user.client-key-data: Invalid value: "REDACTED": must be a string' },
    { given: 'client-key as an object', text: withUser({ 'client-key': { path: SECRET } }), problem: 'users[0].user.client-key: Invalid value: "REDACTED": must be a string' },
    { given: 'token as a number', text: withUser({ token: DIGITS }), problem: 'users[0].user.token: Invalid value: "REDACTED": must be a string' },
    { given: 'password as a list', text: withUser({ username: 'admin', password: [SECRET] }), problem: 'users[0].user.password: Invalid value: "REDACTED": must be a string' },
    { given: 'auth-provider as a list', text: withUser({ 'auth-provider': [{ config: { 'client-secret': SECRET } }] }), problem: 'users[0].user.auth-provider: Invalid value: "REDACTED": must be an object' },
    { given: 'exec as a string', text: withUser({ exec: SECRET }), problem: 'users[0].user.exec: Invalid value: "REDACTED": must be an object' },
    { given: 'the user as a list', text: withUser([{ token: SECRET }]), problem: 'users[0].user: Invalid value: "REDACTED": must be an object' },
    { given: 'a users entry as a string', text: kubeconfig({ extra: { users: [`token: ${SECRET}`] } }), problem: 'users[0]: Invalid value: "REDACTED": must be an object' },
    { given: 'users as an object', text: kubeconfig({ extra: { users: { u: { token: SECRET } } } }), problem: 'users: Invalid value: "REDACTED": must be a list' },
    { given: 'the file as a list', text: JSON.stringify([{ users: [{ name: 'u', user: { token: SECRET } }] }]), problem: ': Invalid value: "REDACTED": must be an object' },
  ]
  for (const c of cases) {
    it(`names the field but never shows the value of ${c.given}`, () => {
      const found = problems(c.text)
      assert.deepEqual(found, [c.problem])
      let message = ''
      try {
        loadKubeconfigConnection(c.text, SOURCE)
      } catch (err) {
        message = (err as Error).message
      }
      assert.ok(message.includes(c.problem.split(':')[0]!), message)
      assert.ok(!message.includes(SECRET) && !message.includes(String(DIGITS)), message)
    })
  }

  it('still shows a wrong-typed value that holds no credential', () => {
    assert.deepEqual(problems(withUser({ token: 't', as: 5 })), ['users[0].user.as: Invalid value: 5: must be a string'])
    assert.deepEqual(problems(kubeconfig({ cluster: { server: 5 } })), ['clusters[0].cluster.server: Invalid value: 5: must be a string'])
  })
})
