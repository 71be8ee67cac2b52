import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { readCommandLine } from '../../../core/options/flags/index.js'
import type { Logger } from '../../../core/logging/logger.js'
import { ConfigFilesError, loadConfigFiles } from '../../../runtimes/node/daemon/config-files.js'
import { runToExit } from './run-to-exit.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

const FILES: Record<string, string> = {
  'authn.yaml': `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "https://issuer.example.com", audiences: [api]}
  claimMappings: {username: {claim: sub, prefix: ""}}
anonymous: {enabled: false}
`,
  'bad-authn.yaml': `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "http://x", audiences: [api]}
  claimMappings: {username: {expression: "claims.sub +"}}
`,
  'authz.yaml': `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- {type: RBAC, name: rbac}
`,
  'encryption.yaml': `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aesgcm: {keys: [{name: k1, secret: ${btoa('0123456789abcdef')}}]}
  - identity: {}
`,
  'bad-encryption.yaml': `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc: {keys: [{name: k1, secret: ${btoa('short')}}]}
`,
  'tracing.yaml': 'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 100\n',
  'admission.yaml': 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration: {limits: []}\n',
}

let dir = ''
const file = (name: string) => join(dir, name)

const run = (argv: string[]) => runToExit(argv)

describe('config files named by flags', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'config-files-'))
    for (const [name, text] of Object.entries(FILES)) await writeFile(file(name), text)
  })
  after(() => rm(dir, { recursive: true, force: true }))

  it('loads every kind a flag names, checked completely', () => {
    const command = readCommandLine([
      `--authentication-config=${file('authn.yaml')}`,
      `--authorization-config=${file('authz.yaml')}`,
      `--encryption-provider-config=${file('encryption.yaml')}`,
      `--tracing-config-file=${file('tracing.yaml')}`,
      `--admission-control-config-file=${file('admission.yaml')}`,
    ])
    assert.equal(command.action, 'run')
    const files = command.action === 'run' ? loadConfigFiles(command.flags, quiet) : assert.fail()
    assert.equal(files.authentication?.jwt[0]?.issuer.url, 'https://issuer.example.com')
    assert.equal(files.authorization?.authorizers[0]?.type, 'RBAC')
    assert.deepEqual(Object.keys(files).sort(), ['admission', 'authentication', 'authorization', 'encryption', 'tracing'])
  })

  it('stops start-up with exit 1 and every problem of every file, each with its field path', async () => {
    const r = await run([`--authentication-config=${file('bad-authn.yaml')}`, `--encryption-provider-config=${file('bad-encryption.yaml')}`])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^Error: --authentication-config: .*bad-authn\.yaml: invalid AuthenticationConfiguration:$/m)
    assert.match(r.stderr, /^ {2}jwt\[0\]\.issuer\.url: Invalid value: "http:\/\/x": URL scheme must be https$/m)
    assert.match(r.stderr, /^ {2}jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "claims\.sub \+": compilation failed/m)
    assert.match(r.stderr, /^Error: --encryption-provider-config: .*bad-encryption\.yaml: invalid EncryptionConfiguration:$/m)
    assert.match(r.stderr, /resources\[0\]\.providers\[0\]\.aescbc\.keys\[0\]\.secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of \[32\]/)
  })

  it('refuses --authentication-config that configures JWT together with --oidc-* flags', async () => {
    const r = await run([`--authentication-config=${file('authn.yaml')}`, '--oidc-issuer-url=https://other.example.com', '--oidc-client-id=x'])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /authentication-config.*oidc/i)
  })

  it('names the flag and the file when a file cannot be read', async () => {
    const r = await run([`--tracing-config-file=${file('missing.yaml')}`])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^Error: --tracing-config-file: cannot read .*missing\.yaml: ENOENT/m)
  })

  it('is a ConfigFilesError listing the problems when called directly', () => {
    const command = readCommandLine([`--tracing-config-file=${file('missing.yaml')}`])
    assert.equal(command.action, 'run')
    assert.throws(() => (command.action === 'run' ? loadConfigFiles(command.flags, quiet) : undefined), ConfigFilesError)
  })
})
