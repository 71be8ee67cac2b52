/** kubectl apply, diff, patch of every type, dry runs and field validation against the daemon. */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

const manifest = (name: string, text: string): string => d.manifest(name, text)

const deployment = (image: string, env: string, labels: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
${labels}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: ${image}
        env:
${env}
`

describe('kubectl apply (client side), diff and patch', () => {
  it('creates, then removes what the manifest no longer has through last-applied-configuration', async () => {
    const first = manifest('web-1.yaml', deployment('nginx:1.26', '        - {name: A, value: "1"}\n        - {name: B, value: "2"}', '    app: web\n    tier: front'))
    assert.equal(await ok('apply', '-f', first), 'deployment.apps/web created\n')
    const second = manifest('web-2.yaml', deployment('nginx:1.27', '        - {name: A, value: "1"}', '    app: web'))
    assert.equal(await ok('apply', '-f', second), 'deployment.apps/web configured\n')
    const out = await ok('get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[*].name} {.metadata.labels}')
    assert.equal(out, 'nginx:1.27 A {"app":"web"}')
    assert.equal(await ok('apply', '-f', second), 'deployment.apps/web unchanged\n')
  })

  it('diffs a changed manifest against the server (a dry-run patch), changing nothing', async () => {
    const third = manifest('web-3.yaml', deployment('nginx:1.28', '        - {name: A, value: "1"}', '    app: web'))
    const r = await d.kubectl('diff', '-f', third)
    assert.equal(r.code, 1, `kubectl diff exits 1 when there are differences:\n${r.stderr}`)
    assert.match(r.stdout, /-\s+image: nginx:1\.27/)
    assert.match(r.stdout, /\+\s+image: nginx:1\.28/)
    assert.equal(await ok('get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.spec.containers[0].image}'), 'nginx:1.27')
  })

  it('patches with strategic merge (the default), merge and JSON patches', async () => {
    await ok('patch', 'deployment', 'web', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"envoy:1"}]}}}}')
    assert.equal(await ok('get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.spec.containers[*].name}'), 'sidecar app')
    await ok('patch', 'deployment', 'web', '--type=merge', '-p', '{"metadata":{"annotations":{"note":"merged"}}}')
    await ok('patch', 'deployment', 'web', '--type=json', '-p', '[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":3}]')
    assert.equal(await ok('get', 'deployment', 'web', '-o', 'jsonpath={.metadata.annotations.note} {.spec.replicas}'), 'merged 3')
    const failed = await d.kubectl('patch', 'deployment', 'web', '--type=json', '-p', '[{"op":"test","path":"/spec/replicas","value":9}]')
    assert.notEqual(failed.code, 0)
    // What kubectl prints against upstream: its JSON patch failures all come back as one generic 422.
    assert.match(failed.stderr, /The request is invalid: the server rejected our request due to an error in our request/)
  })

  it('runs --dry-run=server through validation and stores nothing', async () => {
    const cm = manifest('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\ndata:\n  a: "1"\n')
    assert.equal(await ok('apply', '--dry-run=server', '-f', cm), 'configmap/dry created (server dry run)\n')
    assert.notEqual((await d.kubectl('get', 'configmap', 'dry')).code, 0)
  })

  it('refuses unknown fields with --validate=strict and warns with --validate=warn', async () => {
    const bad = manifest('bad.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ncolour: blue\ndata:\n  a: "1"\n')
    const strict = await d.kubectl('create', '--validate=strict', '-f', bad)
    assert.notEqual(strict.code, 0)
    assert.match(strict.stderr, /strict decoding error: unknown field "colour"/)
    const warned = await d.kubectl('create', '--validate=warn', '-f', bad)
    assert.equal(warned.code, 0, warned.stderr)
    assert.match(warned.stderr, /Warning: unknown field "colour"/)
  })
})

describe('kubectl apply --server-side', () => {
  const cm = (value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  owned: "${value}"\n`

  it('creates, records the manager, and reports a conflict with another manager as upstream does', async () => {
    const file = manifest('ssa-1.yaml', cm('one'))
    assert.equal(await ok('apply', '--server-side', '-f', file), 'configmap/ssa serverside-applied\n')
    const managers = await ok('get', 'configmap', 'ssa', '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}')
    assert.equal(managers, 'kubectl')
    const other = manifest('ssa-2.yaml', cm('two'))
    const conflict = await d.kubectl('apply', '--server-side', '--field-manager=other', '-f', other)
    assert.notEqual(conflict.code, 0)
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.data\.owned/)
    assert.equal(await ok('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', other), 'configmap/ssa serverside-applied\n')
    assert.equal(await ok('get', 'configmap', 'ssa', '-o', 'jsonpath={.data.owned}'), 'two')
  })

  it('takes over from client-side apply without conflicts', async () => {
    const file = manifest('upgrade.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: upgrade\ndata:\n  a: "1"\n')
    assert.equal(await ok('apply', '-f', file), 'configmap/upgrade created\n')
    const changed = manifest('upgrade-2.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: upgrade\ndata:\n  a: "2"\n')
    assert.equal(await ok('apply', '--server-side', '-f', changed), 'configmap/upgrade serverside-applied\n')
    assert.equal(await ok('get', 'configmap', 'upgrade', '-o', 'jsonpath={.data.a}'), '2')
  })

  it('diffs server-side', async () => {
    const file = manifest('ssa-3.yaml', cm('three'))
    const r = await d.kubectl('diff', '--server-side', '--force-conflicts', '-f', file)
    assert.equal(r.code, 1, r.stderr)
    assert.match(r.stdout, /\+\s+owned: three/)
  })
})
