/**
 * kubectl's fallbacks to /openapi/v2, which it reads only in protobuf: an
 * object of a kind the server does not know (client-side validation) and
 * `kubectl explain --output=plaintext-openapiv2`.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

function manifest(name: string, text: string): string {
  const file = join(d.dir, name)
  writeFileSync(file, text)
  return file
}

describe('kubectl and OpenAPI v2 in protobuf', () => {
  for (const verb of ['apply', 'create']) {
    it(`${verb} -f of an unknown kind prints upstream's "no matches for kind" and stores nothing`, async () => {
      const file = manifest(`gizmo-${verb}.yaml`, 'apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: g\n  namespace: default\nspec:\n  size: 1\n')
      const r = await d.kubectl(verb, '-f', file)
      assert.notEqual(r.code, 0)
      assert.match(r.stderr, /no matches for kind "Gizmo" in version "example.com\/v1"/)
      assert.doesNotMatch(r.stderr, /unable to respond with a content type/)
      const apis = await d.kubectl('get', '--raw', '/apis')
      assert.doesNotMatch(apis.stdout, /example\.com/)
    })
  }

  it('explains a kind from the v2 document', async () => {
    const r = await d.kubectl('explain', 'pods', '--output=plaintext-openapiv2')
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /^KIND: {5}Pod\nVERSION: {2}v1\n/)
    for (const field of ['apiVersion\t<string>', 'metadata\t<Object>', 'spec\t<Object>', 'status\t<Object>']) assert.ok(r.stdout.includes(field), field)
  })

  it('explains a nested field from the v2 document', async () => {
    const r = await d.kubectl('explain', 'deployments.spec.replicas', '--output=plaintext-openapiv2')
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /^KIND: {5}Deployment\nVERSION: {2}apps\/v1\n\nFIELD: {4}replicas <integer>\n/)
  })
})
