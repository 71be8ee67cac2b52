/**
 * kubectl against the daemon with an aggregated API server on loopback: the
 * proxy client certificate and request-header CA come from the flags, the
 * extension server checks the certificate and reads the X-Remote-* headers,
 * and kubectl lists, creates and gets its resources, sees its APIService
 * Available, next to the local ones, and explains its kind from the
 * extension's OpenAPI document, which the daemon aggregated.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { type ExtensionServer, startExtensionServer, WARDLE } from '../integration/extension-apiserver.js'
import { Daemon, eventually } from './daemon.js'

describe('kubectl and an aggregated API server', () => {
  let daemon: Daemon
  let ext: ExtensionServer
  let dir: string

  before(async () => {
    const proxyCA = await createCertificateAuthority({ commonName: 'front-proxy-ca' })
    const proxyClient = await issueClientCertificate(proxyCA, { commonName: 'front-proxy-client', organizations: [] })
    ext = await startExtensionServer(proxyCA.certificate, ['front-proxy-client'])
    dir = mkdtempSync(join(tmpdir(), 'aggregation-'))
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text)
      return join(dir, name)
    }
    daemon = await Daemon.start([
      `--requestheader-client-ca-file=${file('front-proxy-ca.crt', proxyCA.certificate)}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      '--requestheader-allowed-names=front-proxy-client',
      `--proxy-client-cert-file=${file('proxy.crt', proxyClient.certificate)}`,
      `--proxy-client-key-file=${file('proxy.key', proxyClient.privateKey)}`,
      '--enable-aggregator-routing',
    ])
    const manifest = daemon.manifest(
      'wardle.yaml',
      `apiVersion: v1
kind: Namespace
metadata: {name: wardle}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: wardle}
spec:
  ports: [{name: https, port: 443}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: api, namespace: wardle}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: https, port: ${ext.port}}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.${WARDLE}}
spec:
  group: ${WARDLE}
  version: v1alpha1
  service: {namespace: wardle, name: api, port: 443}
  caBundle: ${ext.caBundle}
  groupPriorityMinimum: 1000
  versionPriority: 15
`,
    )
    await daemon.ok('apply', '-f', manifest)
  })

  after(async () => {
    await daemon?.stop()
    await ext?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('shows the APIService Available and the local ones as Local', async () => {
    await eventually(async () => {
      const out = await daemon.ok('get', 'apiservice', `v1alpha1.${WARDLE}`)
      assert.match(out, new RegExp(`v1alpha1\\.wardle\\.example\\.com\\s+wardle/api\\s+True`))
    }, 30_000)
    const all = await daemon.ok('get', 'apiservices')
    assert.match(all, /v1\.apps\s+Local\s+True/)
  })

  it('creates, lists and gets the extension server\'s resources with kubectl', async () => {
    const flunder = daemon.manifest('flunder.yaml', `apiVersion: ${WARDLE}/v1alpha1\nkind: Flunder\nmetadata: {name: first, namespace: wardle}\n`)
    await daemon.ok('create', '--validate=false', '-f', flunder)
    await eventually(async () => {
      const list = await daemon.ok('get', 'flunders', '-n', 'wardle')
      assert.match(list, /first/)
    }, 30_000)
    const one = JSON.parse(await daemon.ok('get', 'fl', 'first', '-n', 'wardle', '-o', 'json')) as { metadata: { name: string } }
    assert.equal(one.metadata.name, 'first')
    const seen = ext.seen.filter((s) => s.path.includes('/flunders')).at(-1)!
    assert.equal(seen.clientCommonName, 'front-proxy-client')
    assert.ok(seen.user, 'the extension server believed an identity')
    assert.ok(seen.groups.includes('system:masters'), JSON.stringify(seen.groups))
    assert.equal(seen.raw.find(([n]) => n === 'authorization'), undefined)
  })

  it('lists the group in kubectl api-resources', async () => {
    const out = await daemon.ok('api-resources', '--api-group', WARDLE)
    assert.match(out, /flunders\s+fl\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder/)
  })

  it("explains the extension server's kind from its aggregated OpenAPI document", async () => {
    let out = ''
    await eventually(async () => {
      out = await daemon.ok('explain', 'flunders')
      assert.match(out, /KIND:\s+Flunder/)
    }, 30_000)
    assert.match(out, /VERSION:\s+v1alpha1/)
    assert.match(out, /A Flunder is an example type of the wardle extension server\./)
    const field = await daemon.ok('explain', 'flunders.spec.reference')
    assert.match(field, /The name of another flunder this one points at\./)
    // The older explain reads the merged /openapi/v2 document, in protobuf.
    const v2 = await daemon.ok('explain', 'flunders', '--output=plaintext-openapiv2')
    assert.match(v2, /KIND:\s+Flunder/)
    assert.match(v2, /A Flunder is an example type of the wardle extension server\./)
  })
})
