import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { loadAdmissionConfiguration } from '../../../core/config/admission.js'
import {
  ADMISSION_PLUGIN_NAMES,
  ADMISSION_PLUGINS_IN_ORDER,
  DEFAULT_ENABLED_ADMISSION_PLUGINS,
  enabledAdmissionPlugins,
} from '../../../core/config/admission-plugins.js'
import { ConfigFileError, problemText } from '../../../core/config/decode.js'

const header = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n'

function problems(text: string): string[] {
  try {
    loadAdmissionConfiguration(text, '/etc/platform/admission.yaml')
  } catch (err) {
    assert.ok(err instanceof ConfigFileError, String(err))
    return err.problems.map(problemText)
  }
  return []
}

const SUPPORTED = ADMISSION_PLUGIN_NAMES.map((n) => JSON.stringify(n)).join(', ')

const cases = [
  {
    rule: 'a plugin entry has a name',
    bad: `${header}plugins:\n- path: x.yaml\n`,
    problem: 'plugins[0].name: Required value',
    good: `${header}plugins:\n- name: EventRateLimit\n  path: x.yaml\n`,
  },
  {
    rule: 'the name is a known admission plugin',
    bad: `${header}plugins:\n- name: EventRateLimiter\n`,
    problem: `plugins[0].name: Unsupported value: "EventRateLimiter": supported values: ${SUPPORTED}`,
    good: `${header}plugins:\n- name: EventRateLimit\n`,
  },
  {
    rule: 'one entry per plugin',
    bad: `${header}plugins:\n- name: PodNodeSelector\n- name: PodNodeSelector\n`,
    problem: 'plugins[1].name: Duplicate value: "PodNodeSelector"',
    good: `${header}plugins:\n- name: PodNodeSelector\n- name: ImagePolicyWebhook\n`,
  },
  {
    rule: 'the inline configuration is an object',
    bad: `${header}plugins:\n- name: EventRateLimit\n  configuration: [1, 2]\n`,
    problem: 'plugins[0].configuration: Invalid value: [1,2]: must be an object',
    good: `${header}plugins:\n- name: EventRateLimit\n  configuration: {kind: Configuration}\n`,
  },
  {
    rule: 'fields are known',
    bad: `${header}plugins:\n- name: EventRateLimit\n  file: x.yaml\n`,
    problem: 'unknown field "plugins[0].file"',
    good: `${header}plugins: []\n`,
  },
]

describe('AdmissionConfiguration rules', () => {
  for (const c of cases) {
    it(`refuses a file that breaks the rule: ${c.rule}`, () => assert.deepEqual(problems(c.bad), [c.problem]))
    it(`accepts a file that keeps the rule: ${c.rule}`, () => assert.deepEqual(problems(c.good), []))
  }
})

describe('loadAdmissionConfiguration', () => {
  it('resolves a relative path against the directory of the configuration file and keeps inline configuration as data', () => {
    const text = [
      header,
      'plugins:',
      '- name: EventRateLimit',
      '  path: ./eventconfig.yaml',
      '- name: ImagePolicyWebhook',
      '  path: /etc/policy/image.yaml',
      '- name: PodSecurity',
      '  configuration:',
      '    apiVersion: pod-security.admission.config.k8s.io/v1',
      '    kind: PodSecurityConfiguration',
      '    defaults: {enforce: baseline}',
      '- name: PodNodeSelector',
      '  path: ../shared/nodes.yaml',
    ].join('\n')
    assert.deepEqual(loadAdmissionConfiguration(text, '/etc/platform/admission.yaml'), {
      plugins: [
        { name: 'EventRateLimit', path: '/etc/platform/eventconfig.yaml' },
        { name: 'ImagePolicyWebhook', path: '/etc/policy/image.yaml' },
        {
          name: 'PodSecurity',
          configuration: {
            apiVersion: 'pod-security.admission.config.k8s.io/v1',
            kind: 'PodSecurityConfiguration',
            defaults: { enforce: 'baseline' },
          },
        },
        { name: 'PodNodeSelector', path: '/etc/shared/nodes.yaml' },
      ],
    })
  })

  it('keeps a relative path relative when the file was named without a directory', () => {
    const config = loadAdmissionConfiguration(`${header}plugins: [{name: EventRateLimit, path: rate.yaml}]`, 'admission.yaml')
    assert.deepEqual(config.plugins, [{ name: 'EventRateLimit', path: 'rate.yaml' }])
  })

  it('reads the older apiserver.k8s.io/v1alpha1 group, and no other apiVersion', () => {
    const old = 'apiVersion: apiserver.k8s.io/v1alpha1\nkind: AdmissionConfiguration\nplugins: [{name: AlwaysDeny}]\n'
    assert.deepEqual(loadAdmissionConfiguration(old, 'a').plugins, [{ name: 'AlwaysDeny' }])
    assert.deepEqual(problems('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AdmissionConfiguration\n'), [
      'apiVersion: Unsupported value: "apiserver.config.k8s.io/v1alpha1": supported values: "apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1"',
    ])
  })

  it('hands a legacy unversioned plugin file to ImagePolicyWebhook and PodNodeSelector when they are enabled', () => {
    const legacy = 'imagePolicy:\n  kubeConfigFile: /etc/webhook.kubeconfig\n  allowTTL: 50\n'
    assert.deepEqual(loadAdmissionConfiguration(legacy, '/etc/platform/admission.yaml'), {
      plugins: [
        { name: 'ImagePolicyWebhook', path: '/etc/platform/admission.yaml' },
        { name: 'PodNodeSelector', path: '/etc/platform/admission.yaml' },
      ],
    })
    const onlyImages = loadAdmissionConfiguration(legacy, 'a.yaml', { enabledPlugins: ['NamespaceLifecycle', 'ImagePolicyWebhook'] })
    assert.deepEqual(onlyImages.plugins, [{ name: 'ImagePolicyWebhook', path: 'a.yaml' }])
  })

  it('refuses a file that is neither an AdmissionConfiguration nor a legacy plugin file', () => {
    assert.deepEqual(problems('plugins: []\n'), [
      'kind: Invalid value: "null": must be "AdmissionConfiguration"',
      'apiVersion: Unsupported value: "": supported values: "apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1"',
    ])
  })
})

describe('admission plugin names', () => {
  it('runs every known plugin in one fixed order, with webhooks, quota and AlwaysDeny last', () => {
    assert.equal(ADMISSION_PLUGINS_IN_ORDER.length, 37)
    assert.equal(new Set(ADMISSION_PLUGINS_IN_ORDER).size, 37)
    assert.deepEqual(ADMISSION_PLUGINS_IN_ORDER.slice(-4), ['ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota', 'AlwaysDeny'])
    assert.deepEqual(ADMISSION_PLUGIN_NAMES.slice(0, 3), ['AlwaysAdmit', 'AlwaysDeny', 'AlwaysPullImages'])
  })

  it('enables the 23 default plugins, plus the enabled ones, minus the disabled ones, in the fixed order', () => {
    assert.equal(DEFAULT_ENABLED_ADMISSION_PLUGINS.size, 23)
    const plugins = enabledAdmissionPlugins(['NodeRestriction', 'AlwaysPullImages'], ['ResourceQuota', 'PodSecurity'])
    assert.equal(plugins.length, 23)
    assert.deepEqual(plugins.slice(0, 6), ['NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'NodeRestriction', 'TaintNodesByCondition', 'AlwaysPullImages'])
    assert.ok(!plugins.includes('ResourceQuota') && !plugins.includes('PodSecurity'))
    assert.equal(plugins.at(-1), 'ValidatingAdmissionWebhook')
  })
})
