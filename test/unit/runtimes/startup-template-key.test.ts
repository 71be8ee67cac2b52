import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { FLAGS, type FlagValues, parseCommandLine } from '../../../core/options/flags/index.js'
import { CONTENT_FLAGS, PER_START_FLAGS, startupTemplateKey } from '../../../runtimes/node/daemon/startup-template.js'

function values(...argv: string[]): FlagValues {
  const command = parseCommandLine(argv)
  assert.equal(command.action, 'run')
  return command.flags.values
}

const dir = mkdtempSync(join(tmpdir(), 'template-key-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** envtest's flags for one start: a new port, certificate directory, files and etcd each time. */
function envtestStart(n: number): string[] {
  return [
    '--allow-privileged=true',
    '--authorization-mode=RBAC',
    '--bind-address=127.0.0.1',
    `--cert-dir=/tmp/k8s_test_framework_${n}`,
    `--client-ca-file=/tmp/k8s_test_framework_${n}/client-cert-auth-ca.crt`,
    '--disable-admission-plugins=ServiceAccount',
    `--etcd-servers=http://127.0.0.1:${2379 + n}`,
    `--secure-port=${40000 + n}`,
    `--service-account-issuer=https://127.0.0.1:${40000 + n}/`,
    `--service-account-key-file=/tmp/k8s_test_framework_${n}/sa-signer.crt`,
    `--service-account-signing-key-file=/tmp/k8s_test_framework_${n}/sa-signer.key`,
    '--service-cluster-ip-range=10.0.0.0/24',
  ]
}

describe("the daemon's start-up template key", () => {
  it('is the same for two envtest starts, whose ports, certificates and etcd differ', () => {
    const first = startupTemplateKey(values(...envtestStart(1)))
    assert.ok(first)
    assert.equal(startupTemplateKey(values(...envtestStart(2))), first)
  })

  it('differs with any setting that can change what start-up stores', () => {
    const base = startupTemplateKey(values(...envtestStart(1)))
    for (const changed of ['--service-cluster-ip-range=10.96.0.0/16', '--authorization-mode=AlwaysAllow', '--runtime-config=api/all=false,api/v1=true', '--kvstore-prefix=/other', '--enable-priority-and-fairness=false', '--storage-media-type=application/json', '--feature-gates=AllAlpha=true']) {
      assert.notEqual(startupTemplateKey(values(...envtestStart(1), changed)), base, changed)
    }
  })

  it("counts a configuration file by its contents, and has none when the file cannot be read", () => {
    const file = join(dir, 'admission.yaml')
    writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n')
    const before = startupTemplateKey(values(...envtestStart(1), `--admission-control-config-file=${file}`))
    assert.ok(before)
    writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: EventRateLimit, path: limits.yaml}]\n')
    const after = startupTemplateKey(values(...envtestStart(1), `--admission-control-config-file=${file}`))
    assert.ok(after)
    assert.notEqual(after, before)
    assert.equal(startupTemplateKey(values(...envtestStart(1), `--admission-control-config-file=${join(dir, 'missing.yaml')}`)), undefined)
  })

  it('is none for starts whose start-up is not a fixed set of objects, or whose template would hold what is to be encrypted', () => {
    for (const flag of ['--encryption-provider-config=/etc/encryption.yaml', '--kvstore-servers-overrides=/events#http://127.0.0.1:2390', '--workers=2', '--controllers=*', '--simulated-nodes=3']) {
      assert.equal(startupTemplateKey(values(...envtestStart(1), flag)), undefined, flag)
    }
  })

  it('classifies every flag that names a file, a certificate, a key or an address', () => {
    // A new such flag must be placed: in the key by its value, by its file's contents, or left out as each start's own.
    const BY_VALUE = new Set([
      // Files that change nothing start-up stores: their path is in the key, and a start that moves them keeps a template of its own.
      'oidc-ca-file',
      'nodeagent-certificate-authority',
      'nodeagent-client-certificate',
      'nodeagent-client-key',
      'peer-ca-file',
      'proxy-client-cert-file',
      'proxy-client-key-file',
      // These have no template at all.
      'encryption-provider-config',
      'kvstore-servers-overrides',
      // Settings, not places.
      'permit-address-sharing',
      'oidc-issuer-url',
      'runtime-config',
      'nodeagent-preferred-address-types',
      'platform-service-node-port',
    ])
    const looksLikeOne = /file|config$|cert|key$|-ca$|authority|path|dir$|address|port$|servers|issuer|jwks-uri|-ip$/
    const unplaced = FLAGS.map((f) => f.name as string).filter((name) => looksLikeOne.test(name) && !PER_START_FLAGS.has(name as never) && !CONTENT_FLAGS.has(name as never) && !BY_VALUE.has(name))
    assert.deepEqual(unplaced, [])
  })
})
