/**
 * The catalogue holds together: every entry's kind has a type (and a list
 * type), storage keys follow upstream's layout without two resources
 * colliding, name rules are upstream's, and both OpenAPI documents describe
 * every kind.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openApiDocument, openApiKey } from '../../../core/api/openapi.js'
import { openApiV2Document } from '../../../core/api/openapi-v2.js'
import { builtinEntries } from '../../../core/resources/builtin.js'
import { Catalogue, storagePath } from '../../../core/resources/catalogue.js'
import { typeForKind, typeTable } from '../../../core/resources/schema/index.js'

const catalogue = new Catalogue(builtinEntries(async () => ({ allowed: true })))
const entry = (group: string, version: string, resource: string) => catalogue.lookup(group, version, resource)!

describe('catalogue entries', () => {
  it('each have the type of their kind, and stored ones a list type', () => {
    for (const e of catalogue.entries) {
      const def = typeTable[e.typeName]
      assert.ok(def, `${e.resource}: no type ${e.typeName}`)
      assert.deepEqual(def.gvk, { group: e.group, version: e.version, kind: e.kind }, e.resource)
      if (e.verbs.includes('list')) assert.ok(typeForKind(e.group, e.version, e.listKind), `${e.resource}: no ${e.listKind}`)
      for (const s of e.subresources ?? []) {
        if (!s.connect) assert.ok(typeForKind(s.group ?? e.group, s.version ?? e.version, s.kind), `${e.resource}/${s.name}: no ${s.kind}`)
      }
    }
  })

  it('keep objects where upstream does, and only versions of one resource share a place', () => {
    assert.equal(storagePath(entry('', 'v1', 'services')), 'services/specs')
    assert.equal(storagePath(entry('', 'v1', 'endpoints')), 'services/endpoints')
    assert.equal(storagePath(entry('', 'v1', 'nodes')), 'minions')
    assert.equal(storagePath(entry('', 'v1', 'replicationcontrollers')), 'controllers')
    assert.equal(storagePath(entry('networking.k8s.io', 'v1', 'ingresses')), 'ingress')
    assert.equal(storagePath(entry('apps', 'v1', 'deployments')), 'deployments')
    assert.equal(storagePath(entry('apiregistration.k8s.io', 'v1', 'apiservices')), 'apiregistration.k8s.io/apiservices')
    assert.equal(
      storagePath(entry('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')),
      'apiextensions.k8s.io/customresourcedefinitions',
    )
    const owners = new Map<string, Set<string>>()
    for (const e of catalogue.entries.filter((e) => !e.virtualCreate && e.verbs.includes('create'))) {
      const path = storagePath(e)
      owners.set(path, (owners.get(path) ?? new Set()).add(e.kind))
    }
    for (const [path, kinds] of owners) assert.equal(kinds.size, 1, `${path} holds ${[...kinds].join(', ')}`)
    // Nor does one place sit inside another's.
    const paths = [...owners.keys()]
    for (const a of paths) for (const b of paths) if (a !== b) assert.ok(!a.startsWith(`${b}/`), `${a} inside ${b}`)
  })

  it('name objects by upstream’s rules', () => {
    assert.deepEqual(entry('', 'v1', 'configmaps').validateName('app.config'), [])
    assert.equal(entry('', 'v1', 'namespaces').validateName('team.a').length, 1)
    assert.deepEqual(entry('', 'v1', 'services').validateName('1web'), [
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ])
    assert.deepEqual(entry('rbac.authorization.k8s.io', 'v1', 'clusterroles').validateName('system:controller:x'), [])
    assert.equal(entry('rbac.authorization.k8s.io', 'v1', 'roles').validateName('a/b').length, 1)
    assert.deepEqual(entry('networking.k8s.io', 'v1', 'ipaddresses').validateName('2001:db8::1'), [])
    assert.deepEqual(entry('networking.k8s.io', 'v1', 'ipaddresses').validateName('2001:0db8::1'), [
      'must be in canonical form ("2001:db8::1")',
    ])
    assert.deepEqual(entry('certificates.k8s.io', 'v1', 'certificatesigningrequests').validateName('Any Name'), [])
  })
})

describe('OpenAPI documents', () => {
  const tagged = (schema: unknown) =>
    ((schema as { 'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[] })[
      'x-kubernetes-group-version-kind'
    ] ?? []) as { group: string; version: string; kind: string }[]

  it('v2 describes every kind, tagged with its group/version/kind', () => {
    const { doc } = openApiV2Document(catalogue)
    assert.equal(doc['swagger'], '2.0')
    const definitions = doc['definitions'] as Record<string, unknown>
    for (const e of catalogue.entries) {
      const schema = definitions[e.typeName]
      assert.ok(schema, `v2 lacks ${e.typeName}`)
      assert.ok(
        tagged(schema).some((g) => g.group === e.group && g.version === e.version && g.kind === e.kind),
        `${e.typeName} untagged`,
      )
    }
    const paths = doc['paths'] as Record<string, Record<string, { parameters: { in: string; schema?: unknown }[] }>>
    const create = paths['/apis/apps/v1/namespaces/{namespace}/deployments']!['post']!
    assert.deepEqual(create.parameters[0], { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/io.k8s.api.apps.v1.Deployment' } })
  })

  it('v3 describes each group/version’s kinds in its own document', () => {
    for (const { group, version } of catalogue.groupVersions()) {
      const doc = openApiDocument(catalogue, openApiKey(group, version)) as { components: { schemas: Record<string, unknown> } }
      for (const e of catalogue.inGroupVersion(group, version)) {
        assert.ok(doc.components.schemas[e.typeName], `${openApiKey(group, version)} lacks ${e.typeName}`)
      }
    }
  })

  it('keeps the patch merge keys kubectl apply needs', () => {
    const doc = openApiDocument(catalogue, 'api/v1') as { components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> } }
    const containers = doc.components.schemas['io.k8s.api.core.v1.PodSpec']!.properties['containers']!
    assert.equal(containers['x-kubernetes-patch-merge-key'], 'name')
    assert.equal(containers['x-kubernetes-patch-strategy'], 'merge')
  })
})
