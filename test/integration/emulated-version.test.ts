/**
 * `--emulated-version`: the built-in APIs of the emulated release (those
 * introduced after it are not served, in resources nor discovery, unless
 * `--runtime-config` names them with forward compatibility), and /version
 * with the emulation and minimum compatibility versions beside the
 * server's own.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { type ApiServer } from '../../core/index.js'
import { createTestServer, TestClient } from './harness.js'

const servers: ApiServer[] = []
after(() => Promise.all(servers.map((s) => s.shutdown())))

async function client(options: Parameters<typeof createTestServer>[0]): Promise<TestClient> {
  const server = createTestServer(options)
  servers.push(server)
  await server.ready
  return new TestClient(server)
}

const groupNames = async (c: TestClient): Promise<string[]> => ((await c.call('GET', '/apis')).body as { groups: { name: string }[] }).groups.map((g) => g.name)
const resourceNames = async (c: TestClient, gv: string): Promise<string[]> =>
  ((await c.call('GET', `/apis/${gv}`)).body as { resources: { name: string }[] }).resources.map((r) => r.name)

describe('an emulated older release', () => {
  it('does not serve the resources introduced after it', async () => {
    const c = await client({ emulation: { emulated: { major: 1, minor: 31 } } })
    assert.ok(!(await groupNames(c)).includes('resource.k8s.io'))
    const networking = await resourceNames(c, 'networking.k8s.io/v1')
    assert.ok(networking.includes('ingresses'))
    assert.ok(!networking.includes('ipaddresses') && !networking.includes('servicecidrs'))
    const list = await c.call('GET', '/apis/networking.k8s.io/v1/ipaddresses')
    assert.equal(list.status, 404)
    const created = await c.call('POST', '/apis/storage.k8s.io/v1/volumeattributesclasses', { body: { metadata: { name: 'fast' }, driverName: 'csi.example.com' } })
    assert.equal(created.status, 404)
    // Introduced in 1.30: still served at 1.31, not at 1.29.
    assert.ok((await resourceNames(c, 'admissionregistration.k8s.io/v1')).includes('validatingadmissionpolicies'))
    const older = await client({ emulation: { emulated: { major: 1, minor: 29 } } })
    assert.ok(!(await resourceNames(older, 'admissionregistration.k8s.io/v1')).includes('validatingadmissionpolicies'))
    assert.ok((await resourceNames(older, 'flowcontrol.apiserver.k8s.io/v1')).includes('flowschemas'))
  })

  it('serves one that --runtime-config names when forward compatibility allows it', async () => {
    const c = await client({
      runtimeConfig: { 'networking.k8s.io/v1/ipaddresses': true },
      emulation: { emulated: { major: 1, minor: 31 }, runtimeConfigForwardCompatible: true },
    })
    const networking = await resourceNames(c, 'networking.k8s.io/v1')
    assert.ok(networking.includes('ipaddresses'))
    assert.ok(!networking.includes('servicecidrs'))
  })

  it('reports the emulation and minimum compatibility versions in /version, the server its own', async () => {
    const c = await client({ emulation: { emulated: { major: 1, minor: 30 } } })
    const version = (await c.call('GET', '/version')).body as Record<string, string>
    assert.equal(version['gitVersion'], 'v1.32.0')
    assert.equal(version['minor'], '32')
    assert.deepEqual([version['emulationMajor'], version['emulationMinor'], version['minCompatibilityMajor'], version['minCompatibilityMinor']], ['1', '30', '1', '29'])
    const given = await client({ emulation: { emulated: { major: 1, minor: 30 }, minCompatibility: { major: 1, minor: 30 } } })
    assert.equal(((await given.call('GET', '/version')).body as Record<string, string>)['minCompatibilityMinor'], '30')
  })

  it('changes nothing when the emulated release is the server\'s own', async () => {
    const own = await client({ emulation: { emulated: { major: 1, minor: 32 } } })
    const plain = await client({})
    assert.deepEqual(await groupNames(own), await groupNames(plain))
    assert.deepEqual((await own.call('GET', '/version')).body, (await plain.call('GET', '/version')).body)
    assert.ok((await resourceNames(own, 'networking.k8s.io/v1')).includes('ipaddresses'))
  })
})
