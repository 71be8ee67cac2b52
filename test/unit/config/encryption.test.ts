import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigFileError, problemText } from '../../../core/config/decode.js'
import { type EncryptionLoadOptions, loadEncryptionConfiguration } from '../../../core/config/encryption.js'

const key = (bytes: number): string => Buffer.alloc(bytes, 7).toString('base64')
const KEY32 = key(32)
const aescbc = { aescbc: { keys: [{ name: 'k1', secret: KEY32 }] } }
const kmsV2 = (name: string, extra: Record<string, unknown> = {}) => ({ kms: { apiVersion: 'v2', name, endpoint: 'unix:///run/kms.sock', ...extra } })

function file(resources: unknown, header = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration' }): string {
  return JSON.stringify({ ...header, resources })
}

/** One entry encrypting secrets with the given providers. */
const providers = (...list: unknown[]): string => file([{ resources: ['secrets'], providers: list }])
/** One entry with the given resource names. */
const names = (...list: string[]): string => file([{ resources: list, providers: [aescbc] }])

function problems(text: string, options: EncryptionLoadOptions = {}): string[] {
  try {
    loadEncryptionConfiguration(text, 'encryption.yaml', options)
  } catch (err) {
    assert.ok(err instanceof ConfigFileError, String(err))
    return err.problems.map(problemText)
  }
  return []
}

interface Case {
  rule: string
  bad: string
  problem: string
  good: string
  options?: EncryptionLoadOptions
}

const P0 = 'resources[0].providers[0]'

const cases: Case[] = [
  {
    rule: 'at least one resource entry',
    bad: file([]),
    problem: 'resources: Required value: at least one resources is required',
    good: providers(aescbc),
  },
  {
    rule: 'an entry names at least one resource',
    bad: file([{ providers: [aescbc] }]),
    problem: 'resources[0].resources: Required value: at least one resources[0].resources is required',
    good: names('secrets'),
  },
  {
    rule: 'an entry has at least one provider',
    bad: file([{ resources: ['secrets'] }]),
    problem: 'resources[0].providers: Required value: at least one resources[0].providers is required',
    good: providers({ identity: {} }),
  },
  {
    rule: 'a provider entry holds one provider',
    bad: providers({ ...aescbc, identity: {} }),
    problem: `${P0}: Invalid value: {"aescbc":{"keys":[{"name":"k1","secret":"REDACTED"}]},"identity":{}}: more than one provider specified in a single element, should split into different list elements`,
    good: providers(aescbc, { identity: {} }),
  },
  {
    rule: 'a provider entry is not empty',
    bad: providers({}),
    problem: `${P0}: Invalid value: {}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity`,
    good: providers({ identity: {} }),
  },
  {
    rule: 'AES-CBC keys are 32 bytes',
    bad: providers({ aescbc: { keys: [{ name: 'k', secret: key(16) }] } }),
    problem: `${P0}.aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]`,
    good: providers({ aescbc: { keys: [{ name: 'k', secret: key(32) }] } }),
  },
  {
    rule: 'AES-GCM keys are 16, 24 or 32 bytes',
    bad: providers({ aesgcm: { keys: [{ name: 'k', secret: key(20) }] } }),
    problem: `${P0}.aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 20, expected one of [16 24 32]`,
    good: providers({ aesgcm: { keys: [{ name: 'a', secret: key(16) }, { name: 'b', secret: key(24) }, { name: 'c', secret: key(32) }] } }),
  },
  {
    rule: 'secretbox keys are 32 bytes',
    bad: providers({ secretbox: { keys: [{ name: 'k', secret: key(24) }] } }),
    problem: `${P0}.secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 24, expected one of [32]`,
    good: providers({ secretbox: { keys: [{ name: 'k', secret: key(32) }] } }),
  },
  {
    rule: 'secrets are standard base64 with padding',
    bad: providers({ aescbc: { keys: [{ name: 'k', secret: KEY32.replace(/=+$/, '') }] } }),
    problem: `${P0}.aescbc.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded`,
    good: providers({ aescbc: { keys: [{ name: 'k', secret: `${KEY32.slice(0, 20)}\n${KEY32.slice(20)}` }] } }),
  },
  {
    rule: 'a key provider has keys',
    bad: providers({ aescbc: { keys: [] } }),
    problem: `${P0}.aescbc.keys: Required value: at least one keys is required`,
    good: providers(aescbc),
  },
  {
    rule: 'a key has a name',
    bad: providers({ aescbc: { keys: [{ secret: KEY32 }] } }),
    problem: `${P0}.aescbc.keys[0].name: Required value: name is a mandatory field for a key`,
    good: providers({ aescbc: { keys: [{ name: 'n', secret: KEY32 }] } }),
  },
  {
    rule: 'a key has a secret',
    bad: providers({ aescbc: { keys: [{ name: 'n', secret: '' }] } }),
    problem: `${P0}.aescbc.keys[0].secret: Required value: secret is a mandatory field for a key`,
    good: providers(aescbc),
  },
  {
    rule: 'a KMS plugin has a name',
    bad: providers({ kms: { apiVersion: 'v2', endpoint: 'unix:///run/kms.sock' } }),
    problem: `${P0}.kms.name: Required value: name is a mandatory field for a provider`,
    good: providers(kmsV2('vault')),
  },
  {
    rule: "a KMS v2 name has no ':'",
    bad: providers(kmsV2('a:b')),
    problem: `${P0}.kms.name: Invalid value: "a:b": invalid KMS provider name a:b, must not contain ':'`,
    good: providers(kmsV2('a-b')),
  },
  {
    rule: 'KMS v2 names are unique across the file',
    bad: file([
      { resources: ['secrets'], providers: [kmsV2('vault')] },
      { resources: ['configmaps'], providers: [kmsV2('vault')] },
    ]),
    problem: 'resources[1].providers[0].kms.name: Invalid value: "vault": duplicate KMS provider name vault, names must be unique',
    good: file([
      { resources: ['secrets'], providers: [kmsV2('vault')] },
      { resources: ['configmaps'], providers: [kmsV2('other')] },
    ]),
  },
  {
    rule: 'KMS v1 names are unique when the file is reloaded automatically',
    options: { kmsV1: true, reload: true },
    bad: providers({ kms: { name: 'old', endpoint: 'unix:///a.sock' } }, { kms: { name: 'old', endpoint: 'unix:///b.sock' } }),
    problem: 'resources[0].providers[1].kms.name: Invalid value: "old": duplicate KMS provider name old, names must be unique',
    good: providers({ kms: { name: 'old', endpoint: 'unix:///a.sock' } }, { kms: { name: 'new', endpoint: 'unix:///b.sock' } }),
  },
  {
    rule: 'the KMS timeout is positive',
    bad: providers(kmsV2('vault', { timeout: '-1s' })),
    problem: `${P0}.kms.timeout: Invalid value: "-1s": timeout should be a positive value`,
    good: providers(kmsV2('vault', { timeout: '5s' })),
  },
  {
    rule: 'the KMS timeout is a Go duration',
    bad: providers(kmsV2('vault', { timeout: '5 seconds' })),
    problem: `${P0}.kms.timeout: Invalid value: "5 seconds": time: invalid duration "5 seconds"`,
    good: providers(kmsV2('vault', { timeout: '1m30s' })),
  },
  {
    rule: 'the KMS endpoint is required',
    bad: providers({ kms: { apiVersion: 'v2', name: 'vault' } }),
    problem: `${P0}.kms.endpoint: Invalid value: "": endpoint is a mandatory field for a kms`,
    good: providers(kmsV2('vault')),
  },
  {
    rule: 'the KMS endpoint is a unix socket URL',
    bad: providers(kmsV2('vault', { endpoint: 'https://kms.example' })),
    problem: `${P0}.kms.endpoint: Invalid value: "https://kms.example": unsupported scheme "https" for KMS provider, only unix is supported`,
    good: providers(kmsV2('vault', { endpoint: 'unix:///var/run/kms.sock' })),
  },
  {
    rule: 'the KMS endpoint parses as a URL',
    bad: providers(kmsV2('vault', { endpoint: 'unix:///run/%zz.sock' })),
    problem: `${P0}.kms.endpoint: Invalid value: "unix:///run/%zz.sock": invalid endpoint for kms provider, error: parse "unix:///run/%zz.sock": invalid URL escape "%zz"`,
    good: providers(kmsV2('vault', { endpoint: 'unix:///run/%41.sock' })),
  },
  {
    rule: 'the KMS endpoint names a socket',
    bad: providers(kmsV2('vault', { endpoint: 'unix://' })),
    problem: `${P0}.kms.endpoint: Invalid value: "unix://": invalid endpoint for kms provider, error: no socket path after unix://`,
    good: providers(kmsV2('vault', { endpoint: 'unix:///@abstract' })),
  },
  {
    rule: 'cachesize belongs to KMS v1 only',
    bad: providers(kmsV2('vault', { cachesize: 100 })),
    problem: `${P0}.kms.cachesize: Invalid value: 100: cachesize is not supported in v2`,
    good: providers(kmsV2('vault')),
  },
  {
    rule: 'a KMS v1 cachesize is not 0',
    options: { kmsV1: true },
    bad: providers({ kms: { name: 'old', endpoint: 'unix:///a.sock', cachesize: 0 } }),
    problem: `${P0}.kms.cachesize: Invalid value: 0: cachesize should be a positive value, or negative to disable`,
    good: providers({ kms: { name: 'old', endpoint: 'unix:///a.sock', cachesize: -1 } }),
  },
  {
    rule: 'the KMS apiVersion is v1 or v2',
    bad: providers(kmsV2('vault', { apiVersion: 'v3' })),
    problem: `${P0}.kms.apiVersion: Invalid value: "v3": unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported`,
    good: providers(kmsV2('vault')),
  },
  {
    rule: 'KMS v1 (the default apiVersion) needs the KMSv1 feature gate',
    bad: providers({ kms: { name: 'old', endpoint: 'unix:///a.sock' } }),
    problem: `${P0}.kms.apiVersion: Invalid value: "v1": KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.`,
    good: providers(kmsV2('vault')),
  },
  {
    rule: 'resource names are lowercase',
    bad: names('Secrets'),
    problem: 'resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters',
    good: names('secrets'),
  },
  {
    rule: "a bare '*' is not a resource",
    bad: names('*'),
    problem: `resources[0].resources[0]: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`,
    good: names('*.'),
  },
  {
    rule: 'resources without a REST API cannot be encrypted',
    bad: names('serviceipallocations'),
    problem: 'resources[0].resources[0]: Invalid value: "serviceipallocations": resources which do not have REST API/s cannot be encrypted',
    good: names('services'),
  },
  {
    rule: 'events are named in the core group',
    bad: names('*.events.k8s.io'),
    problem: `resources[0].resources[0]: Invalid value: "*.events.k8s.io": '*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file`,
    good: names('events'),
  },
  {
    rule: 'the extensions group is gone',
    bad: names('ingresses.extensions'),
    problem: `resources[0].resources[0]: Invalid value: "ingresses.extensions": 'extensions' group has been removed and cannot be used for encryption`,
    good: names('ingresses.networking.k8s.io'),
  },
  {
    rule: "a resource is not wildcarded across groups ('resource.*')",
    bad: names('deployments.*'),
    problem: 'resources[0].resources[0]: Invalid value: "deployments.*": encrypting the same resource across groups is not supported',
    good: names('*.apps'),
  },
  {
    rule: 'a resource is named once in a list',
    bad: names('secrets', 'secrets'),
    problem: 'resources[0].resources: Invalid value: ["secrets","secrets"]: the same resource cannot be specified multiple times',
    good: names('secrets', 'configmaps'),
  },
  {
    rule: 'wildcards do not overlap inside a list',
    bad: names('secrets', '*.'),
    problem: `resources[0].resources: Invalid value: ["secrets","*."]: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`,
    good: names('secrets', '*.apps'),
  },
  {
    rule: "'*.*' stands alone in its list",
    bad: names('*.*', 'pandas.bears.example'),
    problem: `resources[0].resources: Invalid value: ["*.*","pandas.bears.example"]: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`,
    good: names('*.*'),
  },
  {
    rule: 'a group wildcard masks a later entry of that group',
    bad: file([
      { resources: ['*.apps'], providers: [aescbc] },
      { resources: ['deployments.apps'], providers: [{ identity: {} }] },
    ]),
    problem: 'resources[1].resources[0]: Invalid value: "deployments.apps": resource "deployments.apps" is masked by earlier rule "*.apps"',
    good: file([
      { resources: ['deployments.apps'], providers: [{ identity: {} }] },
      { resources: ['*.apps'], providers: [aescbc] },
    ]),
  },
  {
    rule: "'*.*' masks every later entry",
    bad: file([
      { resources: ['*.*'], providers: [aescbc] },
      { resources: ['*.'], providers: [{ identity: {} }] },
    ]),
    problem: 'resources[1].resources[0]: Invalid value: "*.": resource "*." is masked by earlier rule "*.*"',
    good: file([
      { resources: ['*.'], providers: [{ identity: {} }] },
      { resources: ['*.*'], providers: [aescbc] },
    ]),
  },
]

describe('EncryptionConfiguration rules', () => {
  for (const c of cases) {
    it(`refuses a file that breaks the rule: ${c.rule}`, () => {
      assert.deepEqual(problems(c.bad, c.options), [c.problem])
    })
    it(`accepts a file that keeps the rule: ${c.rule}`, () => {
      assert.deepEqual(problems(c.good, c.options), [])
    })
  }
})

describe('loadEncryptionConfiguration', () => {
  it('returns the providers in order with their keys decoded and the KMS defaults applied', () => {
    const text = [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: EncryptionConfiguration',
      'resources:',
      '- resources: [secrets, "*.apps"]',
      '  providers:',
      '  - kms: {apiVersion: v2, name: vault, endpoint: "unix:///@kms"}',
      `  - aesgcm: {keys: [{name: new, secret: "${key(16)}"}]}`,
      '  - identity: {}',
      '- resources: ["*.*"]',
      '  providers:',
      '  - kms: {name: legacy, endpoint: "unix:///var/run/kms.sock", timeout: 10s}',
    ].join('\n')
    const config = loadEncryptionConfiguration(text, 'encryption.yaml', { kmsV1: true })
    assert.deepEqual(config, {
      resources: [
        {
          resources: [
            { group: '', resource: 'secrets' },
            { group: 'apps', resource: '*' },
          ],
          providers: [
            { type: 'kms', apiVersion: 'v2', name: 'vault', endpoint: 'unix:///@kms', socketPath: '@kms', timeoutMs: 3000 },
            { type: 'aesgcm', keys: [{ name: 'new', secret: new Uint8Array(16).fill(7) }] },
            { type: 'identity' },
          ],
        },
        {
          resources: [{ group: '*', resource: '*' }],
          providers: [
            { type: 'kms', apiVersion: 'v1', name: 'legacy', endpoint: 'unix:///var/run/kms.sock', socketPath: '/var/run/kms.sock', cacheSize: 1000, timeoutMs: 10_000 },
          ],
        },
      ],
    })
  })

  it('reads the legacy kind EncryptionConfig with apiVersion v1, as upstream still does', () => {
    const config = loadEncryptionConfiguration(file([{ resources: ['secrets'], providers: [aescbc] }], { apiVersion: 'v1', kind: 'EncryptionConfig' }), 'e')
    assert.equal(config.resources[0]?.providers[0]?.type, 'aescbc')
  })

  it('reports a repeated wildcard both as a duplicate and as an overlap, as upstream does', () => {
    assert.deepEqual(problems(names('*.apps', '*.apps')), [
      'resources[0].resources: Invalid value: ["*.apps","*.apps"]: the same resource cannot be specified multiple times',
      `resources[0].resources: Invalid value: ["*.apps","*.apps"]: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`,
    ])
  })

  it('treats a null provider member as absent, as Go does', () => {
    assert.deepEqual(problems(providers({ identity: null })), [
      `${P0}: Invalid value: {}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity`,
    ])
  })

  it('refuses unknown fields and other apiVersions', () => {
    assert.deepEqual(problems(providers({ aescbc: { keys: [], colour: 'red' } })), [`unknown field "${P0}.aescbc.colour"`])
    assert.deepEqual(problems(file([], { apiVersion: 'apiserver.config.k8s.io/v1beta1', kind: 'EncryptionConfiguration' })), [
      'apiVersion: Unsupported value: "apiserver.config.k8s.io/v1beta1": supported values: "apiserver.config.k8s.io/v1"',
    ])
  })

  it('lists every problem of the file at once, without showing any secret', () => {
    const text = file([
      { resources: ['Secrets'], providers: [{ aescbc: { keys: [{ name: 'k', secret: key(16) }] } }] },
      { resources: ['configmaps'], providers: [kmsV2('a:b', { timeout: '0s' })] },
    ])
    let message = ''
    try {
      loadEncryptionConfiguration(text, '/etc/platform/encryption.yaml')
    } catch (err) {
      message = (err as Error).message
    }
    assert.equal(
      message,
      [
        '/etc/platform/encryption.yaml: invalid EncryptionConfiguration:',
        '  resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters',
        '  resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]',
        `  resources[1].providers[0].kms.name: Invalid value: "a:b": invalid KMS provider name a:b, must not contain ':'`,
        '  resources[1].providers[0].kms.timeout: Invalid value: "0s": timeout should be a positive value',
      ].join('\n'),
    )
    assert.ok(!message.includes(key(16)))
  })

  it('never shows a key given with the wrong type: a list, a number, or in place of the keys', () => {
    const yaml = (secret: string) =>
      ['apiVersion: apiserver.config.k8s.io/v1', 'kind: EncryptionConfiguration', 'resources:', '- resources: [secrets]', '  providers:', `  - ${secret}`].join('\n')
    const digits = '12345678901234567890123456789012'
    for (const [text, problem] of [
      [yaml(`aescbc: {keys: [{name: k, secret: ["${KEY32}"]}]}`), `${P0}.aescbc.keys[0].secret: Invalid value: "REDACTED": must be a string`],
      [yaml(`aesgcm: {keys: [{name: k, secret: ${digits}}]}`), `${P0}.aesgcm.keys[0].secret: Invalid value: "REDACTED": must be a string`],
      [yaml(`secretbox: {keys: ["${KEY32}"]}`), `${P0}.secretbox.keys[0]: Invalid value: "REDACTED": must be an object`],
    ] as const) {
      const found = problems(text)
      assert.deepEqual(found, [problem])
      assert.ok(!found.join('\n').includes(KEY32) && !found.join('\n').includes(digits.slice(0, 12)))
    }
  })
})
