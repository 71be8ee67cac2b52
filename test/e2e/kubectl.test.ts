/**
 * kubectl end to end against the daemon over TLS with the generated admin
 * kubeconfig: the scenarios a user runs, asserted on what kubectl prints.
 */
import assert from 'node:assert/strict'
import { request } from 'node:https'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Daemon, eventually } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

async function fails(...args: string[]): Promise<string> {
  const r = await d.kubectl(...args)
  assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should fail`)
  return r.stderr
}

const manifest = (name: string, text: string): string => d.manifest(name, text)

describe('kubectl against the daemon', () => {
  it('reads the server version', async () => {
    assert.match(await ok('version'), /Server Version: v1\.32\.0/)
  })

  it('lists the API resources with short names', async () => {
    const out = await ok('api-resources')
    assert.match(out, /^configmaps\s+cm\s+v1\s+true\s+ConfigMap$/m)
    assert.match(out, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m)
    assert.match(out, /^secrets\s+v1\s+true\s+Secret$/m)
    assert.match(out, /^serviceaccounts\s+sa\s+v1\s+true\s+ServiceAccount$/m)
  })

  it('creates with the typed commands (protobuf bodies)', async () => {
    assert.equal(await ok('create', 'namespace', 'team-a'), 'namespace/team-a created\n')
    assert.equal(await ok('create', 'configmap', 'cfg', '--from-literal=a=b', '-n', 'team-a'), 'configmap/cfg created\n')
    assert.equal(await ok('create', 'secret', 'generic', 's1', '--from-literal=k=v', '-n', 'team-a'), 'secret/s1 created\n')
    assert.equal(await ok('create', 'serviceaccount', 'builder', '-n', 'team-a'), 'serviceaccount/builder created\n')
    assert.equal((await ok('get', 'secret', 's1', '-n', 'team-a', '-o', 'jsonpath={.data.k}')), 'dg==')
  })

  it('creates from a file, validated against the OpenAPI document', async () => {
    const file = manifest(
      'web.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: team-a\n  labels:\n    app: web\ndata:\n  port: "80"\n',
    )
    assert.equal(await ok('create', '-f', file), 'configmap/web created\n')
  })

  it('gets as a table, YAML, JSON and jsonpath', async () => {
    const table = await ok('get', 'configmaps', '-n', 'team-a')
    assert.match(table, /^NAME\s+DATA\s+AGE\n/)
    assert.match(table, /^cfg\s+1\s+\d+s$/m)
    assert.match(await ok('get', 'cm', 'cfg', '-n', 'team-a', '-o', 'yaml'), /^ {2}a: b$/m)
    assert.equal(JSON.parse(await ok('get', 'cm', 'cfg', '-n', 'team-a', '-o', 'json')).data.a, 'b')
    assert.equal(await ok('get', 'cm', 'web', '-n', 'team-a', '-o', 'jsonpath={.data.port}'), '80')
    assert.match(await ok('get', 'ns'), /^team-a\s+Active\s+\d+s$/m)
    assert.match(await ok('get', 'secrets', '-n', 'team-a'), /^s1\s+Opaque\s+1\s+\d+s$/m)
  })

  it('lists with label selectors and in chunks', async () => {
    assert.deepEqual((await ok('get', 'cm', '-n', 'team-a', '-l', 'app=web', '-o', 'name')).split('\n').filter(Boolean), [
      'configmap/web',
    ])
    const chunked = await ok('get', 'cm', '-n', 'team-a', '--chunk-size=1', '-o', 'name')
    assert.deepEqual(chunked.split('\n').filter(Boolean), ['configmap/cfg', 'configmap/web'])
  })

  it('labels and patches with merge and JSON patches', async () => {
    assert.equal(await ok('label', 'cm', 'cfg', 'env=prod', '-n', 'team-a'), 'configmap/cfg labeled\n')
    assert.equal(await ok('get', 'cm', 'cfg', '-n', 'team-a', '-o', 'jsonpath={.metadata.labels.env}'), 'prod')
    assert.equal(await ok('patch', 'cm', 'cfg', '-n', 'team-a', '--type', 'merge', '-p', '{"data":{"b":"c"}}'), 'configmap/cfg patched\n')
    await ok('patch', 'cm', 'cfg', '-n', 'team-a', '--type', 'json', '-p', '[{"op":"replace","path":"/data/a","value":"z"}]')
    assert.equal(await ok('get', 'cm', 'cfg', '-n', 'team-a', '-o', 'jsonpath={.data.a}{.data.b}'), 'zc')
  })

  it('replaces, and reports a stale resourceVersion as a Conflict', async () => {
    const current = JSON.parse(await ok('get', 'cm', 'web', '-n', 'team-a', '-o', 'json'))
    current.data.port = '8080'
    assert.equal(await ok('replace', '-f', manifest('web-v2.json', JSON.stringify(current))), 'configmap/web replaced\n')
    current.data.port = '9090'
    const err = await fails('replace', '-f', manifest('web-stale.json', JSON.stringify(current)))
    assert.match(
      err,
      /Error from server \(Conflict\): error when replacing ".*web-stale.json": Operation cannot be fulfilled on configmaps "web": the object has been modified; please apply your changes to the latest version and try again/,
    )
  })

  it('words AlreadyExists, NotFound and Invalid as upstream', async () => {
    assert.match(
      await fails('create', '-f', join(d.dir, 'web.yaml')),
      /Error from server \(AlreadyExists\): error when creating ".*web.yaml": configmaps "web" already exists/,
    )
    assert.match(
      await fails('create', 'configmap', 'cfg', '-n', 'team-a'),
      /error: failed to create configmap: configmaps "cfg" already exists/,
    )
    assert.match(await fails('get', 'cm', 'nope', '-n', 'team-a'), /Error from server \(NotFound\): configmaps "nope" not found/)
    const bad = manifest('bad.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n  namespace: team-a\n')
    assert.match(
      await fails('create', '-f', bad),
      /The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    )
    assert.match(
      await fails('create', 'configmap', 'x', '-n', 'missing'),
      /error: failed to create configmap: namespaces "missing" not found/,
    )
  })

  it('watches with get -w', async () => {
    const watch = d.kubectlStream('get', 'cm', '-n', 'team-a', '-w')
    try {
      await eventually(() => assert.match(watch.output(), /^web\s+1\s+\d+s$/m))
      await ok('create', 'configmap', 'late', '-n', 'team-a')
      await eventually(() => assert.match(watch.output(), /^late\s+0\s+\d+s$/m))
    } finally {
      watch.child.kill()
    }
  })

  it('answers auth whoami and auth can-i', async () => {
    assert.match(await ok('auth', 'whoami'), /Username\s+kubernetes-admin/)
    assert.equal(await ok('auth', 'can-i', 'create', 'configmaps'), 'yes\n')
  })

  it('explains a resource from the OpenAPI document', async () => {
    assert.match(await ok('explain', 'configmaps'), /KIND:\s+ConfigMap/)
  })

  it('reads the health endpoints', async () => {
    assert.equal(await ok('get', '--raw', '/healthz'), 'ok')
    assert.match(await ok('get', '--raw', '/readyz?verbose'), /readyz check passed/)
    assert.match(await ok('get', '--raw', '/livez?verbose&exclude=etcd'), /\[\+\]etcd excluded: ok/)
  })

  it('deletes a configmap and a namespace with what is in it', async () => {
    assert.equal(await ok('delete', 'cm', 'late', '-n', 'team-a'), 'configmap "late" deleted\n')
    assert.equal(await ok('delete', 'namespace', 'team-a', '--timeout=20s'), 'namespace "team-a" deleted\n')
    assert.match(await fails('get', 'ns', 'team-a'), /namespaces "team-a" not found/)
  })

  it('refuses a request without a credential with 401', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: d.port, path: '/api/v1/namespaces', rejectUnauthorized: false }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.end()
    })
    assert.equal(status, 401)
  })
})
