/**
 * Admission plugins against the daemon with kubectl: the default set on a
 * pod, plugins enabled and disabled by flag, the AdmissionConfiguration file
 * with one plugin's configuration inline and another's in a file next to
 * it, the deprecated --admission-control, and start-up refused for an
 * unknown, contradictory or misconfigured plugin.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { defaultAdmissionPlugins } from '../../core/admission/plugins.js'
import { ADMISSION_PLUGINS_IN_ORDER, DEFAULT_ENABLED_ADMISSION_PLUGINS } from '../../core/config/admission-plugins.js'
import { BIN, Daemon } from './daemon.js'

/** The default plugins the server does not implement yet: named in one start-up warning. */
const NOT_BUILT = ADMISSION_PLUGINS_IN_ORDER.filter((name) => DEFAULT_ENABLED_ADMISSION_PLUGINS.has(name) && !defaultAdmissionPlugins().includes(name))

const podYaml = (name: string, more = '') =>
  [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    more,
    '  containers:',
    '  - name: app',
    '    image: nginx',
    '    resources: {requests: {cpu: 100m}}',
    '',
  ]
    .filter((l) => l !== '')
    .join('\n')

async function podSpec(d: Daemon, name: string, namespace = 'default'): Promise<Record<string, any>> {
  return (JSON.parse(await d.ok('get', 'pod', name, '-n', namespace, '-o', 'json')) as { spec: Record<string, any> }).spec
}

describe('admission plugins of the daemon', () => {
  it('runs the default set: account, token volume, tolerations and priority; refuses a missing account and stores nothing', async () => {
    const d = await Daemon.start()
    try {
      const warning = 'admission plugins on by default that this server does not implement yet, so they do not run'
      if (NOT_BUILT.length) assert.ok(d.logs.join('').includes(`${warning}: ${NOT_BUILT.join(', ')}`), d.logs.join(''))
      else assert.ok(!d.logs.join('').includes(warning))
      await d.ok('create', '-f', d.manifest('web.yaml', podYaml('web')))
      const spec = await podSpec(d, 'web')
      assert.equal(spec['serviceAccountName'], 'default')
      assert.match(spec['volumes'][0].name, /^kube-api-access-/)
      assert.equal(spec['containers'][0].volumeMounts[0].mountPath, '/var/run/secrets/kubernetes.io/serviceaccount')
      assert.deepEqual(
        spec['tolerations'].map((t: { key: string; tolerationSeconds: number }) => `${t.key}=${t.tolerationSeconds}`),
        ['node.kubernetes.io/not-ready=300', 'node.kubernetes.io/unreachable=300'],
      )
      assert.equal(spec['priority'], 0)
      const refused = await d.kubectl('create', '-f', d.manifest('ghost.yaml', podYaml('ghost', '  serviceAccountName: ghost')))
      assert.notEqual(refused.code, 0)
      assert.match(refused.stderr, /Error from server \(Forbidden\).*pods "ghost" is forbidden: error looking up service account default\/ghost: serviceaccount "ghost" not found/)
      assert.match((await d.kubectl('get', 'pod', 'ghost')).stderr, /NotFound/)
    } finally {
      await d.stop()
    }
  })

  it('enables and disables plugins by flag, with one configuration inline and one from a file beside the config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-admission-'))
    writeFileSync(
      join(dir, 'tolerations.yaml'),
      [
        'apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1',
        'kind: Configuration',
        'default:',
        '- {key: team, operator: Exists, effect: NoSchedule}',
        '',
      ].join('\n'),
    )
    writeFileSync(
      join(dir, 'admission.yaml'),
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: PodNodeSelector',
        '  configuration:',
        '    podNodeSelectorPluginConfig: {clusterDefaultNodeSelector: "zone=west"}',
        '- name: PodTolerationRestriction',
        '  path: tolerations.yaml',
        '',
      ].join('\n'),
    )
    const d = await Daemon.start([
      '--enable-admission-plugins=PodTolerationRestriction,DenyServiceExternalIPs,PodNodeSelector',
      '--disable-admission-plugins=Priority',
      '--default-not-ready-toleration-seconds=60',
      `--admission-control-config-file=${join(dir, 'admission.yaml')}`,
    ])
    try {
      await d.ok('create', '-f', d.manifest('web.yaml', podYaml('web')))
      const spec = await podSpec(d, 'web')
      assert.deepEqual(spec['nodeSelector'], { zone: 'west' })
      assert.deepEqual(
        spec['tolerations'].map((t: { key: string }) => t.key),
        // DefaultTolerationSeconds runs before PodTolerationRestriction, as upstream orders them.
        ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'team', 'node.kubernetes.io/memory-pressure'],
      )
      assert.equal(spec['tolerations'][0].tolerationSeconds, 60)
      assert.equal(spec['priority'], undefined, 'Priority is disabled')
      const service = 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n  externalIPs: [192.0.2.7]\n'
      const svc = await d.kubectl('create', '-f', d.manifest('svc.yaml', service))
      assert.notEqual(svc.code, 0)
      assert.match(svc.stderr, /services "web" is forbidden: use of external IPs is denied by admission control/)
      assert.match((await d.kubectl('get', 'service', 'web')).stderr, /NotFound/)
    } finally {
      await d.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('takes --admission-control as the complete list, with the deprecation warning', async () => {
    const d = await Daemon.start(['--admission-control=NamespaceAutoProvision,NamespaceLifecycle'])
    try {
      assert.match(d.logs.join(''), /--admission-control is deprecated: Use --enable-admission-plugins or --disable-admission-plugins instead\. Will be removed in a future version\./)
      await d.ok('create', 'configmap', 'cfg', '-n', 'provisioned', '--from-literal=a=b')
      assert.match(await d.ok('get', 'namespace', 'provisioned', '-o', 'name'), /namespace\/provisioned/)
      await d.ok('create', '-f', d.manifest('web.yaml', podYaml('web')))
      const spec = await podSpec(d, 'web')
      assert.equal(spec['serviceAccountName'], undefined, 'ServiceAccount is not in the list')
      assert.equal(spec['tolerations'], undefined, 'nor DefaultTolerationSeconds')
    } finally {
      await d.stop()
    }
  })

  it('refuses to start for an unknown, contradictory or misconfigured plugin, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-admission-'))
    try {
      const run = (...flags: string[]) =>
        spawnSync(process.execPath, [BIN, '--secure-port=0', '--bind-address=127.0.0.1', `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`, ...flags], {
          encoding: 'utf8',
          timeout: 30_000,
        })
      const cases: [string[], RegExp][] = [
        [['--enable-admission-plugins=Bogus'], /enable-admission-plugins plugin "Bogus" is unknown/],
        [['--enable-admission-plugins=AlwaysPullImages', '--disable-admission-plugins=AlwaysPullImages'], /\[AlwaysPullImages\] in enable-admission-plugins and disable-admission-plugins overlapped/],
        [['--enable-admission-plugins=EventRateLimit'], /the EventRateLimit admission plugin needs a configuration/],
      ]
      writeFileSync(
        join(dir, 'bad.yaml'),
        'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    apiVersion: eventratelimit.admission.k8s.io/v1alpha1\n    kind: Configuration\n    limits: [{type: Pod, burst: 0}]\n',
      )
      cases.push([
        ['--enable-admission-plugins=EventRateLimit', `--admission-control-config-file=${join(dir, 'bad.yaml')}`],
        /plugins\[0\]\.configuration: invalid Configuration:\n\s+limits\[0\]\.type: Unsupported value: "Pod"[^\n]*\n\s+limits\[0\]\.burst: Invalid value: 0: must be positive/,
      ])
      // Each plugin's own decoder is heard at start-up, as a line naming the file's entry and the field, never a stack trace.
      const inline = (name: string, plugin: string, configuration: string): string[] => {
        writeFileSync(join(dir, name), `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ${plugin}\n  configuration: ${configuration}\n`)
        return [`--admission-control-config-file=${join(dir, name)}`]
      }
      cases.push(
        [
          inline('pod-security.yaml', 'PodSecurity', '{apiVersion: pod-security.admission.config.k8s.io/v1, kind: PodSecurityConfiguration, defaults: {enforce-verison: latest}}'),
          /^Error: --admission-control-config-file: \S+pod-security\.yaml: plugins\[0\]\.configuration: invalid PodSecurityConfiguration:\n\s+unknown field "defaults\.enforce-verison"/m,
        ],
        [
          inline('quota.yaml', 'ResourceQuota', '{apiVersion: apiserver.config.k8s.io/v1, kind: ResourceQuotaConfiguration, limitedResources: [{resource: pods, matchContain: [x]}]}'),
          /^Error: --admission-control-config-file: \S+quota\.yaml: plugins\[0\]\.configuration: invalid ResourceQuotaConfiguration:\n\s+unknown field "limitedResources\[0\]\.matchContain"/m,
        ],
        [
          inline('webhook.yaml', 'ValidatingAdmissionWebhook', '{apiVersion: v7, kind: Nonsense, anything: goes}'),
          /^Error: --admission-control-config-file: \S+webhook\.yaml: plugins\[0\]\.configuration: invalid WebhookAdmissionConfiguration:\n\s+kind: Invalid value: "Nonsense"/m,
        ],
      )
      for (const [flags, message] of cases) {
        const r = run(...flags)
        assert.equal(r.status, 1, `${flags.join(' ')}: ${r.stderr}`)
        assert.match(r.stderr, message)
        assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace')
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
