import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { applyPodDefaultsInSteps, applyPodSpecDefaultsInSteps } from '../../../core/resources/core/pod-spec-defaults.js'
import { type PodSpecValidationOptions, validatePodOnlyInSteps, validatePodSpecInSteps, validatePodTemplateSpecInSteps } from '../../../core/resources/core/pod-spec-validation.js'
import { errorText, type FieldPath, fieldPath } from '../../../core/machinery/field.js'
import { runAtOnce } from '../../../core/machinery/time-slice.js'

// The passes at once, as the registry runs them for an object of ordinary size.
const applyPodSpecDefaults = (spec: Record<string, unknown>) => runAtOnce(applyPodSpecDefaultsInSteps(spec))
const validatePodSpec = (spec: unknown, path: FieldPath, opts?: PodSpecValidationOptions) => runAtOnce(validatePodSpecInSteps(spec, path, opts))
const validatePodTemplateSpec = (template: unknown, path: FieldPath) => runAtOnce(validatePodTemplateSpecInSteps(template, path))

type Spec = Record<string, unknown>

/** What a user creating a pod with this spec is told, defaults applied first as the server does. */
function problems(spec: Spec, opts = {}): string[] {
  const pod = { spec: structuredClone(spec) }
  runAtOnce(applyPodDefaultsInSteps(pod))
  const path = fieldPath('spec')
  return [...validatePodSpec(pod.spec, path, opts), ...runAtOnce(validatePodOnlyInSteps(pod.spec, path))].map(errorText)
}

const app = (extra: Record<string, unknown> = {}) => ({ name: 'app', image: 'nginx:1.27', ...extra })

const cases: [string, Spec, string[]][] = [
  ['a pod with one plain container', { containers: [app()] }, []],
  ['no containers', { containers: [] }, ['spec.containers: Required value']],
  ['a container without a name', { containers: [{ image: 'x:1' }] }, ['spec.containers[0].name: Required value']],
  [
    'a container name that is not a DNS label',
    { containers: [app({ name: 'App_1' })] },
    [
      `spec.containers[0].name: Invalid value: "App_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    ],
  ],
  [
    'an init container named like a container',
    { containers: [app()], initContainers: [app()] },
    ['spec.initContainers[0].name: Duplicate value: "app"'],
  ],
  ['a container without an image', { containers: [{ name: 'app' }] }, ['spec.containers[0].image: Required value']],
  [
    'an image with surrounding spaces',
    { containers: [app({ image: ' nginx' })] },
    ['spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace'],
  ],
  [
    'a port out of range',
    { containers: [app({ ports: [{ containerPort: 0 }, { containerPort: 65536 }] })] },
    [
      'spec.containers[0].ports[0].containerPort: Required value',
      'spec.containers[0].ports[1].containerPort: Invalid value: 65536: must be between 1 and 65535, inclusive',
    ],
  ],
  [
    'an unknown protocol',
    { containers: [app({ ports: [{ containerPort: 80, protocol: 'HTTP' }] })] },
    ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
  ],
  [
    'port names that are not IANA service names, or repeat',
    { containers: [app({ ports: [{ containerPort: 80, name: 'http' }, { containerPort: 81, name: 'http' }, { containerPort: 82, name: 'web--1' }] })] },
    [
      'spec.containers[0].ports[1].name: Duplicate value: "http"',
      'spec.containers[0].ports[2].name: Invalid value: "web--1": must not contain consecutive hyphens',
    ],
  ],
  [
    'env names: missing, or with "="',
    { containers: [app({ env: [{ value: 'x' }, { name: 'A=B' }] })] },
    [
      'spec.containers[0].env[0].name: Required value',
      `spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
    ],
  ],
  [
    'an env value from nowhere',
    { containers: [app({ env: [{ name: 'A', valueFrom: {} }] })] },
    ['spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'],
  ],
  [
    'a request above its limit',
    { containers: [app({ resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } })] },
    ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
  ],
  [
    'a negative quantity and an unknown resource',
    { containers: [app({ resources: { requests: { memory: '-1Mi', gpus: '1' } } })] },
    [
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0',
      'spec.containers[0].resources.requests[gpus]: Invalid value: "gpus": must be a standard resource for containers',
    ],
  ],
  [
    'volumes with a repeated name and two sources',
    { containers: [app()], volumes: [{ name: 'v', emptyDir: {} }, { name: 'v', emptyDir: {}, hostPath: { path: '/x' } }] },
    // The source's problems come first, as upstream checks it before the name.
    [
      'spec.volumes[1].hostPath: Forbidden: may not specify more than 1 volume type',
      'spec.volumes[1].name: Duplicate value: "v"',
    ],
  ],
  [
    'a secret volume without a secret',
    { containers: [app()], volumes: [{ name: 'creds', secret: {} }] },
    ['spec.volumes[0].secret.secretName: Required value'],
  ],
  [
    'a mount of a volume that has problems, and a mount without a name (neither is found)',
    {
      containers: [{ ...app(), volumeMounts: [{ name: 'creds', mountPath: '/a' }, { name: '', mountPath: '/b' }] }],
      volumes: [{ name: 'creds', secret: {} }],
    },
    [
      'spec.volumes[0].secret.secretName: Required value',
      'spec.containers[0].volumeMounts[0].name: Not found: "creds"',
      'spec.containers[0].volumeMounts[1].name: Required value',
      'spec.containers[0].volumeMounts[1].name: Not found: ""',
    ],
  ],
  [
    'mounts of a missing volume, and without a path',
    { containers: [app({ volumeMounts: [{ name: 'nope', mountPath: '/data' }, { name: 'v' }] })], volumes: [{ name: 'v', emptyDir: {} }] },
    ['spec.containers[0].volumeMounts[0].name: Not found: "nope"', 'spec.containers[0].volumeMounts[1].mountPath: Required value'],
  ],
  [
    'a probe without a handler, and one with two',
    { containers: [app({ livenessProbe: {}, readinessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 } } })] },
    [
      'spec.containers[0].livenessProbe: Required value: must specify a handler type',
      'spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type',
    ],
  ],
  [
    'a liveness probe that needs two successes',
    { containers: [app({ livenessProbe: { tcpSocket: { port: 80 }, successThreshold: 2 } })] },
    ['spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1'],
  ],
  [
    'unknown restart and DNS policies',
    { containers: [app()], restartPolicy: 'Sometimes', dnsPolicy: 'Google' },
    [
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      'spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    ],
  ],
  [
    'a negative user id',
    { containers: [app({ securityContext: { runAsUser: -1 } })], securityContext: { fsGroup: -2 } },
    [
      'spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive',
      'spec.securityContext.fsGroup: Invalid value: -2: must be between 0 and 2147483647, inclusive',
    ],
  ],
  [
    'a privileged container',
    { containers: [app({ securityContext: { privileged: true } })] },
    ['spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy'],
  ],
  [
    'an active deadline of zero',
    { containers: [app()], activeDeadlineSeconds: 0 },
    ['spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive'],
  ],
]

describe('pod spec validation', () => {
  for (const [what, spec, expected] of cases) it(`reports ${what}`, () => assert.deepEqual(problems(spec), expected))

  it('lets a privileged container through when the server allows it', () => {
    assert.deepEqual(problems({ containers: [app({ securityContext: { privileged: true } })] }, { allowPrivileged: true }), [])
  })
})

describe('pod template validation', () => {
  const template = (spec: Spec, labels: Record<string, string> = {}) => ({ metadata: { labels }, spec })

  it('wants an image for every container, as a pod does', () => {
    const t = template({ containers: [{ name: 'app' }] })
    applyPodSpecDefaults(t.spec)
    assert.deepEqual(validatePodTemplateSpec(t, fieldPath('template')).map(errorText), ['template.spec.containers[0].image: Required value'])
  })

  it('accepts an image with surrounding spaces, which only a pod may not have', () => {
    const t = template({ containers: [app({ image: 'nginx:1.27 ' })] })
    applyPodSpecDefaults(t.spec)
    assert.deepEqual(validatePodTemplateSpec(t, fieldPath('template')).map(errorText), [])
  })

  it('reports bad labels and ephemeral containers under the template', () => {
    const t = template({ containers: [app()], ephemeralContainers: [{ name: 'debug', image: 'busybox:1' }] }, { app: 'no spaces' })
    applyPodSpecDefaults(t.spec)
    assert.deepEqual(validatePodTemplateSpec(t, fieldPath('template')).map(errorText), [
      `template.labels: Invalid value: "no spaces": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      'template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template',
    ])
  })
})
