/**
 * One kubectl scenario, run against the daemon on each runtime (node-scenario,
 * bun and deno.test.ts; the Node daemon also runs the full e2e suite): the same flags, the
 * generated admin.kubeconfig with its client certificate, every write verb, a
 * CustomResourceDefinition and one of its objects, a watch, and a restart on
 * the same directory that keeps the objects.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import { Daemon, eventually } from './daemon.js'

export { BUN_DAEMON, DENO_DAEMON } from './daemon.js'

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
`

const WIDGET = `apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: rt}
spec: {size: 3}
`

/** Defines the scenario's tests; `command` gives the program and its leading arguments, e.g. `[bun, entry.ts]`. */
export function runtimeScenario(runtime: string, command: () => Promise<readonly string[]> | readonly string[]): void {
  describe(`the daemon under ${runtime}, driven by kubectl`, () => {
    let d: Daemon | undefined
    let program: readonly string[]
    const daemon = (): Daemon => d ?? assert.fail('the daemon did not start')

    before(async () => {
      program = await command()
      d = await Daemon.start([], { command: program })
    })

    after(async () => {
      // Whatever failed, the daemon stops and its directory goes.
      await d?.stop()
    })

    it('authenticates kubectl with the admin client certificate', async () => {
      assert.equal(await daemon().ok('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'), 'kubernetes-admin')
    })

    it("authenticates a service account's token, and refuses one changed by a character", async () => {
      // Every bearer token is digested on each request (core/authn/constant-time.ts): here by the runtime's own SHA-256.
      await daemon().ok('create', 'serviceaccount', 'robot')
      const token = (await daemon().ok('create', 'token', 'robot')).trim()
      // A kubeconfig with the token alone: beside the admin's client certificate, the certificate would decide.
      const admin = parse(readFileSync(daemon().kubeconfig, 'utf8')) as { clusters: [{ cluster: object }] }
      const configWith = (name: string, bearer: string): string =>
        daemon().manifest(
          `${name}.kubeconfig`,
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'Config',
            clusters: [{ name: 'rt', cluster: admin.clusters[0].cluster }],
            users: [{ name, user: { token: bearer } }],
            contexts: [{ name: 'rt', context: { cluster: 'rt', user: name } }],
            'current-context': 'rt',
          }),
        )
      const robot = configWith('robot', token)
      for (let i = 0; i < 2; i++) {
        // The second time from the authenticator's cache, which files tokens by their digest.
        assert.equal(await daemon().ok('--kubeconfig', robot, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'), 'system:serviceaccount:default:robot')
      }
      // A character inside the signature: the last one's low bits are base64 padding, which decoders ignore.
      const at = token.length - 10
      const forged = configWith('forged', `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`)
      const refused = await daemon().kubectl('--kubeconfig', forged, 'auth', 'whoami')
      assert.notEqual(refused.code, 0)
      assert.match(refused.stderr, /Unauthorized/)
    })

    it('creates, reads, lists, patches, replaces and deletes', async () => {
      const ok = (...args: string[]) => daemon().ok(...args)
      await ok('create', 'namespace', 'rt')
      await ok('-n', 'rt', 'create', 'configmap', 'settings', '--from-literal=mode=fast')
      assert.equal(await ok('-n', 'rt', 'get', 'configmap', 'settings', '-o', 'jsonpath={.data.mode}'), 'fast')
      await ok('-n', 'rt', 'label', 'configmap', 'settings', 'tier=gold')
      assert.match(await ok('-n', 'rt', 'get', 'configmaps', '-l', 'tier=gold', '-o', 'name'), /^configmap\/settings$/m)
      const replaced = (await ok('-n', 'rt', 'get', 'configmap', 'settings', '-o', 'json')).replace('"fast"', '"slow"')
      await ok('replace', '-f', daemon().manifest('settings.json', replaced))
      assert.equal(await ok('-n', 'rt', 'get', 'configmap', 'settings', '-o', 'jsonpath={.data.mode}'), 'slow')
      await ok('-n', 'rt', 'create', 'configmap', 'scratch')
      await ok('-n', 'rt', 'delete', 'configmap', 'scratch')
      const gone = await daemon().kubectl('-n', 'rt', 'get', 'configmap', 'scratch')
      assert.notEqual(gone.code, 0)
      assert.match(gone.stderr, /NotFound|not found/)
    })

    it('serves a CustomResourceDefinition and refuses an object its schema rejects', async () => {
      const ok = (...args: string[]) => daemon().ok(...args)
      await ok('apply', '-f', daemon().manifest('crd.yaml', CRD))
      await ok('wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=20s')
      await eventually(async () => void (await ok('apply', '-f', daemon().manifest('widget.yaml', WIDGET))))
      assert.equal(await ok('-n', 'rt', 'get', 'widget', 'w1', '-o', 'jsonpath={.spec.size}'), '3')
      const bad = await daemon().kubectl('apply', '-f', daemon().manifest('bad.yaml', WIDGET.replace('w1', 'w2').replace('size: 3', 'size: 0')))
      assert.notEqual(bad.code, 0)
      assert.match(bad.stderr, /spec\.size/)
      assert.equal((await daemon().kubectl('-n', 'rt', 'get', 'widget', 'w2')).code, 1, 'nothing was stored')
    })

    it('decodes a large YAML body in its worker thread, and refuses a broken one in upstream\'s words', async () => {
      const data = Array.from({ length: 2000 }, (_, i) => `  key-${i}: value ${i}\n`).join('')
      const created = await daemon().postYaml('/api/v1/namespaces/rt/configmaps', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large-yaml\ndata:\n${data}`)
      assert.equal(created.status, 201, created.text)
      assert.equal(await daemon().ok('-n', 'rt', 'get', 'configmap', 'large-yaml', '-o', 'jsonpath={.data.key-1999}'), 'value 1999')
      const broken = await daemon().postYaml('/api/v1/namespaces/rt/configmaps', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [broken\ndata:\n${data}`)
      assert.equal(broken.status, 400, broken.text)
      assert.match(broken.text, /error converting YAML to JSON: yaml: line \d+: /)
      // Had no worker started, the daemon would have said so and decoded on its serving thread.
      assert.doesNotMatch(daemon().logs.join(''), /decoded on the serving thread/)
    })

    it('streams a watch: a configmap created after it starts shows up', async () => {
      const watch = daemon().kubectlStream('-n', 'rt', 'get', 'configmaps', '--watch-only', '-o', 'name')
      try {
        // The watch may start after a create: create another each round until the watch shows one.
        let round = 0
        await eventually(async () => {
          await daemon().kubectl('-n', 'rt', 'create', 'configmap', `watched-${round++}`)
          assert.match(watch.output(), /configmap\/watched-\d+/)
        }, 20_000)
      } finally {
        watch.child.kill('SIGKILL')
      }
    })

    it('exits 0 on SIGTERM and keeps every object across a restart', async () => {
      const before = daemon()
      assert.equal(await before.terminate(), 0)
      d = undefined
      d = await Daemon.start([], { command: program, dir: before.dir, port: before.port })
      assert.equal(await daemon().ok('-n', 'rt', 'get', 'configmap', 'settings', '-o', 'jsonpath={.data.mode}'), 'slow')
      assert.equal(await daemon().ok('-n', 'rt', 'get', 'widget', 'w1', '-o', 'jsonpath={.spec.size}'), '3')
    })
  })
}
