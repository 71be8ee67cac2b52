/** Each plugin's configuration decoded and checked at start-up, with field paths. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { admissionConfigurationProblems, decodeAdmissionConfigurations } from '../../../core/admission/plugins.js'

const problems = (name: Parameters<typeof admissionConfigurationProblems>[0][number], raw: unknown) =>
  admissionConfigurationProblems([name], { [name]: raw }, () => 'admission.yaml')

describe('admission plugin configurations', () => {
  it('decodes the three kinds, with their defaults', () => {
    const decoded = decodeAdmissionConfigurations(['EventRateLimit', 'PodTolerationRestriction', 'PodNodeSelector', 'NamespaceLifecycle'], {
      EventRateLimit: { apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration', limits: [{ type: 'Server', qps: 5, burst: 10 }] },
      PodNodeSelector: { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'zone=a' } },
    })
    assert.deepEqual(decoded, {
      EventRateLimit: { limits: [{ type: 'Server', qps: 5, burst: 10, cacheSize: 0 }] },
      PodTolerationRestriction: { default: [], whitelist: [] },
      PodNodeSelector: { clusterDefaultNodeSelector: 'zone=a' },
    })
  })

  const table: [string, Parameters<typeof problems>[0], unknown, string[]][] = [
    ['EventRateLimit without a configuration', 'EventRateLimit', undefined, ['the EventRateLimit admission plugin needs a configuration']],
    [
      'EventRateLimit limits',
      'EventRateLimit',
      { apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration', limits: [{ type: 'Pod', qps: 1, burst: 0, cacheSize: -1 }] },
      [
        'limits[0].type: Unsupported value: "Pod": supported values: "Namespace", "Server", "SourceAndObject", "User"',
        'limits[0].burst: Invalid value: 0: must be positive',
        'limits[0].cacheSize: Invalid value: -1: must not be negative',
      ],
    ],
    ['EventRateLimit with no limit', 'EventRateLimit', { apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration' }, ['limits: Invalid value: []: must not be empty']],
    ['a wrong apiVersion', 'EventRateLimit', { apiVersion: 'v1', kind: 'Configuration', limits: [] }, ['apiVersion: Unsupported value: "v1"']],
    [
      'PodTolerationRestriction tolerations',
      'PodTolerationRestriction',
      { apiVersion: 'podtolerationrestriction.admission.k8s.io/v1alpha1', kind: 'Configuration', whitelist: [{ key: 'k', operator: 'Maybe', effect: 'Sometimes' }], default: [{ operator: 'Equal' }] },
      [
        'default[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty',
        'whitelist[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"',
        'whitelist[0].effect: Unsupported value: "Sometimes"',
      ],
    ],
    ['a PodNodeSelector selector', 'PodNodeSelector', { podNodeSelectorPluginConfig: { team: 'a=b=c' } }, ['podNodeSelectorPluginConfig[team]: Invalid value: "a=b=c": invalid selector']],
  ]
  for (const [what, name, raw, wanted] of table) {
    it(`refuses ${what}, naming the file and the fields`, () => {
      const found = problems(name, raw)
      assert.equal(found.length, 1)
      assert.match(found[0] ?? '', /^admission\.yaml: /)
      for (const text of wanted) assert.ok(found[0]?.includes(text), `${found[0]} names ${text}`)
    })
  }
})
