/** kubectl and a CustomResourceDefinition against the daemon, from its creation to its deletion. */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { definition, schema } from '../fixtures/crd-shapes.js'
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

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
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
              cronSpec: {type: string, description: When the job runs.}
              image: {type: string}
              replicas: {type: integer, minimum: 1, maximum: 10}
          status:
            type: object
            properties:
              replicas: {type: integer}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`

const cronTab = (replicas: number) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-cron
spec:
  cronSpec: "* * * * */5"
  image: my-cron-image
  replicas: ${replicas}
`

describe('kubectl with a CustomResourceDefinition', () => {
  it('creates the definition and waits for it to be established', async () => {
    assert.equal(await ok('apply', '-f', manifest('crd.yaml', CRD)), 'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n')
    assert.equal(
      await ok('wait', '--for', 'condition=established', '--timeout=10s', 'crd/crontabs.stable.example.com'),
      'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com condition met\n',
    )
    assert.match(await ok('api-resources', '--api-group=stable.example.com'), /crontabs\s+ct\s+stable.example.com\/v1\s+true\s+CronTab/)
  })

  it('creates, lists with its printer columns, patches and scales an instance', async () => {
    assert.equal(await ok('apply', '-f', manifest('cron.yaml', cronTab(1))), 'crontab.stable.example.com/my-cron created\n')
    const table = await ok('get', 'crontabs')
    assert.match(table, /^NAME\s+SPEC\s+REPLICAS\s+AGE\n/)
    assert.match(table, /\nmy-cron\s+\* \* \* \* \*\/5\s+1\s+\d+s\n/)
    assert.match(await ok('get', 'all'), /crontab.stable.example.com\/my-cron/)
    assert.equal(await ok('patch', 'ct', 'my-cron', '--type=merge', '-p', '{"spec":{"image":"other"}}'), 'crontab.stable.example.com/my-cron patched\n')
    assert.equal(await ok('scale', 'crontab', 'my-cron', '--replicas=4'), 'crontab.stable.example.com/my-cron scaled\n')
    assert.equal(await ok('get', 'ct', 'my-cron', '-o', 'jsonpath={.spec.image} {.spec.replicas}'), 'other 4')
  })

  it('applies on the server side, naming the managers of conflicting fields, and explains the schema', async () => {
    const file = manifest('cron-ssa.yaml', cronTab(2))
    const conflicted = await d.kubectl('apply', '--server-side', '-f', file)
    assert.notEqual(conflicted.code, 0)
    // kubectl scale wrote the replicas through the scale subresource, and is named so, as upstream names it.
    assert.match(conflicted.stderr, /Apply failed with 2 conflicts: conflicts with "kubectl" with subresource "scale" using stable.example.com\/v1:\n- \.spec\.replicas\nconflicts with "kubectl-patch" using stable.example.com\/v1:\n- \.spec\.image\n/)
    assert.equal(await ok('apply', '--server-side', '--force-conflicts', '-f', file), 'crontab.stable.example.com/my-cron serverside-applied\n')
    assert.equal(await ok('get', 'ct', 'my-cron', '-o', 'jsonpath={.spec.image} {.spec.replicas}'), 'my-cron-image 2')
    assert.match(await ok('explain', 'crontab.spec'), /cronSpec\s+<string>/)
  })

  it('refuses an invalid instance with the field the schema names', async () => {
    const r = await d.kubectl('apply', '-f', manifest('bad.yaml', cronTab(20).replace('my-cron', 'bad-cron')))
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /spec\.replicas: Invalid value: 20: spec\.replicas in body should be less than or equal to 10/)
  })

  it('deletes the definition with its instances', async () => {
    assert.equal(await ok('delete', 'crd', 'crontabs.stable.example.com'), 'customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted\n')
    // kubectl may still have the resource in its discovery cache: either way it is not found.
    const r = await d.kubectl('get', 'crontabs')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /the server doesn't have a resource type "crontabs"|Unable to list "stable.example.com\/v1, Resource=crontabs": the server could not find the requested resource/)
    const fresh = await d.kubectl('get', 'crontabs', '--cache-dir', join(d.dir, 'fresh-cache'))
    assert.match(fresh.stderr, /the server doesn't have a resource type "crontabs"/)
  })
})

describe('kubectl with a definition whose schema takes every shape', () => {
  const crd = definition('shape')
  // JSON, as `on` and `off` in the schema's enum would be booleans to kubectl's YAML 1.1 reader.
  const file = () => manifest('shapes.json', JSON.stringify(crd))
  const stored = async () => JSON.parse(await ok('get', 'crd', crd.metadata.name, '-o', 'json')).spec.versions[0].schema.openAPIV3Schema

  it('applies it client side with strict validation and reads every nested schema back', async () => {
    assert.match(await ok('apply', '-f', file()), /customresourcedefinition.apiextensions.k8s.io\/shapes.shapes.example.com created/)
    assert.deepEqual(await stored(), schema())
    assert.match(await ok('apply', '-f', file()), /unchanged/)
  })

  it('applies it again server side, and a changed item schema replaces the old one', async () => {
    await ok('apply', '--server-side', '-f', file())
    assert.deepEqual(await stored(), schema())
    const changed = structuredClone(crd)
    changed.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.tags.items.maxLength = 9
    await ok('apply', '--server-side', '-f', manifest('shapes-changed.json', JSON.stringify(changed)))
    assert.deepEqual((await stored()).properties.spec.properties.tags.items, { type: 'string', maxLength: 9, pattern: '^[a-z]+$' })
    await ok('wait', '--for=condition=Established', `crd/${crd.metadata.name}`, '--timeout=20s')
    assert.match(await ok('explain', 'shapes.spec.tags'), /FIELD:\s+tags <\[\]string>/)
  })
})
