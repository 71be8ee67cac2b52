/** The daemon's admission flags and configuration file turned into createApiServer's admission options. */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { defaultAdmissionPlugins } from '../../../core/admission/plugins.js'
import { loadAdmissionConfiguration } from '../../../core/config/admission.js'
import { DEFAULT_ENABLED_ADMISSION_PLUGINS } from '../../../core/config/admission-plugins.js'
import { readCommandLine } from '../../../core/options/flags/index.js'
import { daemonAdmission } from '../../../runtimes/node/daemon/admission.js'

const dir = mkdtempSync(join(tmpdir(), 'apiserver-admission-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function admissionFor(argv: string[], configText?: string) {
  const command = readCommandLine(argv)
  if (command.action !== 'run') return assert.fail()
  let file
  if (configText !== undefined) {
    const path = join(dir, 'admission.yaml')
    writeFileSync(path, configText)
    file = loadAdmissionConfiguration(configText, path)
  }
  return daemonAdmission(command.flags, file)
}

describe('the daemon admission options', () => {
  it('runs the implemented default plugins and lists the ones not built yet; the toleration flags go along', () => {
    const got = admissionFor(['--default-unreachable-toleration-seconds=20'])
    assert.deepEqual([...(got.options.plugins ?? [])].sort(), defaultAdmissionPlugins().sort())
    assert.deepEqual(
      [...got.notImplementedDefaults].sort(),
      [...DEFAULT_ENABLED_ADMISSION_PLUGINS].filter((name) => !defaultAdmissionPlugins().includes(name)).sort(),
    )
    assert.deepEqual([got.options.defaultNotReadyTolerationSeconds, got.options.defaultUnreachableTolerationSeconds], [300, 20])
    assert.deepEqual(got.problems, [])
  })

  it('takes --admission-control as the complete list, in upstream order', () => {
    const got = admissionFor(['--admission-control=Priority,NamespaceLifecycle'])
    assert.deepEqual(got.options.plugins, ['NamespaceLifecycle', 'Priority'])
    assert.deepEqual(got.notImplementedDefaults, [])
  })

  it("hands an enabled plugin its path file, read relative to the config file, and ignores disabled plugins' entries", () => {
    writeFileSync(join(dir, 'erl.yaml'), 'apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits: [{type: Server, qps: 1, burst: 2}]\n')
    const config = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  path: erl.yaml\n- name: PodNodeSelector\n  configuration: {nonsense: true}\n'
    const got = admissionFor(['--enable-admission-plugins=EventRateLimit', `--admission-control-config-file=${join(dir, 'admission.yaml')}`], config)
    assert.deepEqual(got.problems, [])
    assert.deepEqual(got.options.configurations, {
      EventRateLimit: { apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration', limits: [{ type: 'Server', qps: 1, burst: 2 }] },
    })
  })

  it('reports a path that cannot be read', () => {
    const config = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodNodeSelector\n  path: missing.yaml\n'
    const got = admissionFor(['--enable-admission-plugins=PodNodeSelector,NodeRestriction', `--admission-control-config-file=${join(dir, 'admission.yaml')}`], config)
    assert.equal(got.problems.length, 1)
    assert.match(got.problems[0] ?? '', /^--admission-control-config-file: plugins\[0\]\.path: cannot read .*missing\.yaml/)
  })

  it('reads ImagePolicyWebhook\'s kubeconfig into the connection it calls, and refuses one that cannot be read', () => {
    const kubeconfig = join(dir, 'images.kubeconfig')
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters:\n- name: images\n  cluster: {server: "https://127.0.0.1:9443/review"}\nusers:\n- name: apiserver\n  user: {token: secret-token}\ncontexts:\n- name: c\n  context: {cluster: images, user: apiserver}\ncurrent-context: c\n',
    )
    const config = (file: string) =>
      `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  configuration:\n    imagePolicy: {kubeConfigFile: ${JSON.stringify(file)}, allowTTL: 50, denyTTL: 50, retryBackoff: 500, defaultAllow: false}\n`
    const got = admissionFor(['--enable-admission-plugins=ImagePolicyWebhook', `--admission-control-config-file=${join(dir, 'admission.yaml')}`], config(kubeconfig))
    assert.deepEqual(got.problems, [])
    assert.deepEqual(got.options.configurations?.ImagePolicyWebhook, {
      allowTTLMs: 50_000,
      denyTTLMs: 50_000,
      retryBackoffMs: 500,
      defaultAllow: false,
      connection: { url: 'https://127.0.0.1:9443/review', bearerToken: 'secret-token' },
    })
    const missing = admissionFor(['--enable-admission-plugins=ImagePolicyWebhook', `--admission-control-config-file=${join(dir, 'admission.yaml')}`], config(join(dir, 'nope')))
    assert.match(missing.problems[0] ?? '', /^--admission-control-config-file: .*nope/)
  })
  it("decodes the webhook plugins' configuration strictly and refuses a kubeconfig of credentials per host, which the server would not present", () => {
    const flags = [`--admission-control-config-file=${join(dir, 'admission.yaml')}`]
    const problemsFor = (plugin: string, configuration: string) =>
      admissionFor(flags, `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ${plugin}\n  configuration: ${configuration}\n`).problems
    const at = `--admission-control-config-file: ${join(dir, 'admission.yaml')}: plugins[0].configuration: invalid`
    const v1 = 'apiVersion: apiserver.config.k8s.io/v1, kind: WebhookAdmissionConfiguration'
    assert.deepEqual(problemsFor('ValidatingAdmissionWebhook', '{apiVersion: v7, kind: Nonsense, anything: goes}'), [
      `${at} WebhookAdmissionConfiguration:\n` +
        '  kind: Invalid value: "Nonsense": must be "WebhookAdmissionConfiguration"\n' +
        '  apiVersion: Unsupported value: "v7": supported values: "apiserver.config.k8s.io/v1"',
    ])
    assert.deepEqual(problemsFor('MutatingAdmissionWebhook', `{${v1}, kubeconfigFile: /etc/kubernetes/webhooks.kubeconfig}`), [
      `${at} WebhookAdmissionConfiguration:\n  unknown field "kubeconfigFile"`,
    ])
    assert.deepEqual(problemsFor('MutatingAdmissionWebhook', `{${v1}}`), [
      `${at} WebhookAdmissionConfiguration:\n  kubeConfigFile: Invalid value: "": must be an absolute file path`,
    ])
    assert.deepEqual(problemsFor('ValidatingAdmissionWebhook', `{${v1}, kubeConfigFile: webhooks.kubeconfig}`), [
      `${at} WebhookAdmissionConfiguration:\n  kubeConfigFile: Invalid value: "webhooks.kubeconfig": must be an absolute file path`,
    ])
    // Each version has its own kind name, as upstream registers them.
    assert.deepEqual(problemsFor('ValidatingAdmissionWebhook', '{apiVersion: apiserver.config.k8s.io/v1, kind: WebhookAdmission, kubeConfigFile: /k}'), [
      `${at} WebhookAdmissionConfiguration:\n  kind: Invalid value: "WebhookAdmission": must be "WebhookAdmissionConfiguration"`,
    ])
    const forbidden = 'kubeConfigFile: Forbidden: webhook client credentials per host are not supported by this server; remove the configuration of this plugin'
    assert.deepEqual(problemsFor('ValidatingAdmissionWebhook', `{${v1}, kubeConfigFile: /etc/kubernetes/webhooks.kubeconfig}`), [
      `${at} WebhookAdmissionConfiguration:\n  ${forbidden}`,
    ])
    assert.deepEqual(
      problemsFor('MutatingAdmissionWebhook', '{apiVersion: apiserver.config.k8s.io/v1alpha1, kind: WebhookAdmission, kubeConfigFile: /etc/kubernetes/webhooks.kubeconfig}'),
      [`${at} WebhookAdmission:\n  ${forbidden}`],
    )
    // Without a configuration both plugins run.
    assert.deepEqual(admissionFor(flags, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n').problems, [])
  })
})
