/** The Pod Security Standards without a server: a table of pods against levels and versions, with upstream's texts. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { podSecurityConfiguration } from '../../../core/admission/pod-security/configuration.js'
import { evaluatePod, type LevelVersion, policyFromLabels } from '../../../core/admission/pod-security/policy.js'

type Obj = Record<string, unknown>
const spec = (container: Obj = {}, podSpec: Obj = {}): Obj => ({ containers: [{ name: 'c', image: 'x', ...container }], ...podSpec })
const judge = (level: LevelVersion, podSpec: Obj, annotations?: Record<string, string>) =>
  evaluatePod(level, { metadata: annotations ? { annotations } : {}, spec: podSpec }).detail
const baseline: LevelVersion = { level: 'baseline', version: 'latest' }
const restricted: LevelVersion = { level: 'restricted', version: 'latest' }
const RESTRICTED_OK = { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } }

describe('Pod Security baseline', () => {
  const cases: [string, Obj, string, Record<string, string>?][] = [
    ['a plain pod', spec(), ''],
    ['added capabilities', spec({ securityContext: { capabilities: { add: ['NET_ADMIN', 'CHOWN', 'SYS_TIME'] } } }), 'non-default capabilities (container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add)'],
    ['host namespaces', spec({}, { hostIPC: true, hostNetwork: true }), 'host namespaces (hostNetwork=true, hostIPC=true)'],
    ['hostPath volumes', spec({}, { volumes: [{ name: 'a', hostPath: { path: '/' } }, { name: 'b', hostPath: { path: '/x' } }] }), 'hostPath volumes (volumes "a", "b")'],
    [
      'host ports in two containers',
      { containers: [{ name: 'b', ports: [{ hostPort: 81 }] }, { name: 'a', ports: [{ hostPort: 80 }] }] },
      'hostPort (containers "a", "b" use hostPorts 80, 81)',
    ],
    ['procMount', spec({ securityContext: { procMount: 'Unmasked' } }), 'procMount (container "c" must not set securityContext.procMount to "Unmasked")'],
    [
      'seLinux type and user',
      spec({ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'root' } } }),
      'seLinuxOptions (container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)',
    ],
    ['unconfined seccomp', spec({}, { securityContext: { seccompProfile: { type: 'Unconfined' } } }), 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
    ['unsafe sysctls', spec({}, { securityContext: { sysctls: [{ name: 'kernel.msgmax' }, { name: 'net.ipv4.tcp_rmem' }] } }), 'forbidden sysctls (kernel.msgmax)'],
    [
      'unconfined AppArmor fields',
      spec({ securityContext: { appArmorProfile: { type: 'Unconfined' } } }, { securityContext: { appArmorProfile: { type: 'Unconfined' } } }),
      'forbidden AppArmor profile (pod and container "c" must not set AppArmor profile type to "Unconfined")',
    ],
    ['a hostProcess container', spec({ securityContext: { windowsOptions: { hostProcess: true } } }), 'hostProcess (container "c" must not set securityContext.windowsOptions.hostProcess=true)'],
    [
      'an unconfined AppArmor annotation',
      spec(),
      'forbidden AppArmor profile (annotations must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/c="unconfined"")',
      { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' },
    ],
  ]
  for (const [what, podSpec, detail, annotations] of cases) it(`judges ${what}`, () => assert.equal(judge(baseline, podSpec, annotations), detail))

  it('applies only the checks and values of the version asked for', () => {
    const sysctl = spec({}, { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_rmem' }] } })
    assert.equal(judge({ level: 'baseline', version: 'v1.31' }, sysctl), 'forbidden sysctls (net.ipv4.tcp_rmem)')
    assert.equal(judge({ level: 'baseline', version: 'v1.32' }, sysctl), '')
    const unconfined = spec({}, { securityContext: { seccompProfile: { type: 'Unconfined' } } })
    assert.equal(judge({ level: 'baseline', version: 'v1.18' }, unconfined), '')
    const engine = spec({ securityContext: { seLinuxOptions: { type: 'container_engine_t' } } })
    assert.match(judge({ level: 'baseline', version: 'v1.30' }, engine), /^seLinuxOptions/)
    assert.equal(judge({ level: 'baseline', version: 'v1.31' }, engine), '')
  })
})

describe('Pod Security restricted', () => {
  it('passes a pod that meets every control', () => assert.equal(judge(restricted, spec(RESTRICTED_OK)), ''))

  it('lists baseline failures first, then restricted ones, each in the order of its check', () => {
    assert.equal(
      judge(restricted, spec({ securityContext: { privileged: true, runAsUser: 0 } }, { volumes: [{ name: 'h', hostPath: { path: '/' } }] })),
      'privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), restricted volume types (volume "h" uses restricted volume type "hostPath"), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), runAsUser=0 (container "c" must not set runAsUser=0), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    )
  })

  it('judges explicit bad values and added capabilities', () => {
    const sc = { ...RESTRICTED_OK.securityContext, runAsNonRoot: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'CHOWN'] } }
    assert.equal(
      judge(restricted, spec({ securityContext: sc }, { securityContext: { seccompProfile: { type: 'Unconfined' } } })),
      'unrestricted capabilities (container "c" must not include "CHOWN" in securityContext.capabilities.add), runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false), seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    )
  })

  it('exempts a Windows pod from the Linux-only controls from 1.25 on', () => {
    const windows = spec({ securityContext: { runAsNonRoot: true } }, { os: { name: 'windows' } })
    assert.equal(judge(restricted, windows), '')
    assert.match(judge({ level: 'restricted', version: 'v1.24' }, windows), /^allowPrivilegeEscalation != false/)
  })
})

describe('Pod Security labels and configuration', () => {
  const defaults = podSecurityConfiguration(undefined).defaults

  it('reads levels and versions from labels, failing closed on an invalid one', () => {
    const { policy, errors } = policyFromLabels(
      { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/warn-version': 'v1.x' },
      defaults,
    )
    assert.deepEqual(policy.enforce, { level: 'baseline', version: 'latest' })
    assert.deepEqual(policy.audit, { level: 'privileged', version: 'latest' })
    assert.deepEqual(policy.warn, { level: 'restricted', version: 'latest' })
    assert.deepEqual(
      errors.map((e) => `${e.field}: ${e.detail}`),
      ['metadata.labels[pod-security.kubernetes.io/warn-version]: must be "latest" or "v1.x"'],
    )
  })

  it('validates its configuration with field paths', () => {
    assert.throws(
      () =>
        podSecurityConfiguration({
          apiVersion: 'pod-security.admission.config.k8s.io/v1',
          kind: 'PodSecurityConfiguration',
          defaults: { warn: 'loud', 'audit-version': 'next' },
          exemptions: { namespaces: ['Bad_NS', 'ok', 'ok'], usernames: [''] },
        }),
      (err: Error) =>
        /defaults\.audit-version: Invalid value: "next"/.test(err.message) &&
        /defaults\.warn: Invalid value: "loud"/.test(err.message) &&
        /exemptions\.namespaces\[0\]: Invalid value: "Bad_NS"/.test(err.message) &&
        /exemptions\.namespaces\[2\]: Duplicate value: "ok"/.test(err.message) &&
        /exemptions\.usernames\[0\]: Invalid value: "": must be non-empty/.test(err.message),
    )
  })
})
