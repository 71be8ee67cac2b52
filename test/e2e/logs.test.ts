/**
 * The daemon's logs as an operator meets them: klog text on standard error,
 * the "HTTP" line of each request at -v=3, one start-up line saying what is
 * served where, and /logs/ (--enable-logs-handler) for administrators only.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Daemon, eventually } from './daemon.js'

describe('daemon logs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-e2e-logs-'))
  let daemon: Daemon
  let plainKubeconfig: string

  before(async () => {
    const tokens = join(dir, 'tokens.csv')
    writeFileSync(tokens, 'plain-token,plain,1001,dev\n')
    daemon = await Daemon.start(['--logging-format=text', '-v=3', '--enable-logs-handler', '--authorization-mode=RBAC', `--token-auth-file=${tokens}`])
    const server = (await daemon.ok('config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}')).trim()
    const ca = (await daemon.ok('config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}')).trim()
    plainKubeconfig = daemon.manifest(
      'plain.kubeconfig',
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: e2e, cluster: {server: "${server}", certificate-authority-data: "${ca}"}}]`,
        'users: [{name: plain, user: {token: plain-token}}]',
        'contexts: [{name: plain, context: {cluster: e2e, user: plain}}]',
        'current-context: plain',
      ].join('\n'),
    )
  })
  after(async () => {
    await daemon?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  const logText = () => daemon.logs.join('')

  it("writes klog's text lines, and at -v=3 one HTTP line per request", async () => {
    await daemon.ok('get', 'namespaces', 'default')
    await eventually(() =>
      assert.match(logText(), /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ httplog\.ts:1\] "HTTP" verb="GET" URI="\/api\/v1\/namespaces\/default" latency="[\d.]+(ns|µs|ms|s)" userAgent="kubectl\/[^"]*" audit-ID="[0-9a-f-]{36}" srcIP="[^"]+" resp=200$/m),
    )
    assert.doesNotMatch(logText(), /^\{/m, 'no JSON line in text format')
  })

  it('says once at start-up where it serves and what, /logs/ included', () => {
    const serving = logText()
      .split('\n')
      .filter((l) => l.includes('"Serving on '))
    assert.equal(serving.length, 1, logText())
    assert.match(serving[0]!, /paths=".*\/metrics.*\/logs\/ \(\/var\/log\)"/)
  })

  it('serves /logs/ to an administrator and refuses a plain user', async () => {
    const listing = await daemon.kubectl('get', '--raw', '/logs/')
    assert.equal(listing.code, 0, listing.stderr)
    assert.match(listing.stdout, /^<pre>\n/)
    const refused = await daemon.kubectl('--kubeconfig', plainKubeconfig, 'get', '--raw', '/logs/')
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /Forbidden/)
    await eventually(() => assert.match(logText(), /"HTTP" verb="GET" URI="\/logs\/" .* resp=403$/m))
  })
})
