/**
 * The peer proxy between two daemons on one etcd: the second serves no
 * batch/v1 (`--runtime-config`) and emulates 1.31 (no resource.k8s.io/v1),
 * so a request for jobs or device classes sent to it is answered by the
 * first, as the caller; a group no server serves is still a 404. Attack: a client that claims to be a forwarding peer (the peer
 * header and X-Remote-* identity headers) without the proxy client
 * certificate is treated as any client.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { connect as http2Connect } from 'node:http2'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon, freePort } from './daemon.js'

const FULL = '127.0.0.1'
const WITHOUT_BATCH = '127.0.0.2'

interface Answer {
  status: number
  body: string
}

/** One HTTPS request with an optional client certificate, trusting the cluster CA. */
function call(
  address: string,
  port: number,
  ca: string,
  method: string,
  path: string,
  opts: { cert?: { certificate: string; privateKey: string }; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body)
    const req = request(
      {
        host: address,
        port,
        method,
        path,
        ca,
        servername: 'kubernetes.default.svc',
        ...(opts.cert ? { cert: opts.cert.certificate, key: opts.cert.privateKey } : {}),
        headers: { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
        timeout: 30_000,
      },
      (res) => {
        let text = ''
        res.on('data', (d) => (text += String(d)))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on('error', reject)
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.end(body)
  })
}

async function eventually(what: string, check: () => Promise<boolean>, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

const job = (name: string) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
})

describe('the peer proxy between two servers on one etcd', () => {
  let etcd: EtcdServer
  const daemons: Daemon[] = []
  let port = 0
  let caPem = ''
  let jane: { certificate: string; privateKey: string }

  before(async () => {
    etcd = await EtcdServer.start()
    port = await freePort()
    // One cluster CA signs both serving certificates (and is the peer CA); another signs the proxy client certificate.
    const ca = await createCertificateAuthority({ commonName: 'peer-test-ca' })
    caPem = ca.certificate
    jane = await issueClientCertificate(ca, { commonName: 'jane', organizations: [] })
    const frontProxyCa = await createCertificateAuthority({ commonName: 'peer-test-front-proxy-ca' })
    const proxyClient = await issueClientCertificate(frontProxyCa, { commonName: 'front-proxy-client', organizations: [] })
    const shared = mkdtempSync(join(tmpdir(), 'peer-proxy-'))
    const file = (name: string, text: string) => {
      writeFileSync(join(shared, name), text, { mode: 0o600 })
      return join(shared, name)
    }
    const common = [
      `--etcd-servers=${etcd.clientUrl}`,
      '--authorization-mode=RBAC',
      '--feature-gates=UnknownVersionInteroperabilityProxy=true',
      `--peer-ca-file=${file('ca.crt', ca.certificate)}`,
      `--proxy-client-cert-file=${file('proxy.crt', proxyClient.certificate)}`,
      `--proxy-client-key-file=${file('proxy.key', proxyClient.privateKey)}`,
      `--requestheader-client-ca-file=${file('front-proxy-ca.crt', frontProxyCa.certificate)}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    ]
    for (const [address, extra] of [
      [FULL, []],
      [WITHOUT_BATCH, ['--runtime-config=batch/v1=false', '--emulated-version=1.31']],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'apiserver-e2e-'))
      mkdirSync(join(dir, 'pki'), { mode: 0o700 })
      writeFileSync(join(dir, 'pki', 'ca.crt'), ca.certificate, { mode: 0o600 })
      writeFileSync(join(dir, 'pki', 'ca.key'), ca.privateKey, { mode: 0o600 })
      daemons.push(await Daemon.start([...common, ...extra], { dir, port, bindAddress: address }))
    }
    // jane may read jobs in default only.
    const admin = daemons[0]!
    await admin.ok('create', 'role', 'job-reader', '-n', 'default', '--verb=get,list,create', '--resource=jobs.batch')
    await admin.ok('create', 'rolebinding', 'jane-job-reader', '-n', 'default', '--role=job-reader', '--user=jane')
  })
  after(async () => {
    await Promise.all(daemons.map((d) => d.stop()))
    await etcd?.destroy()
  })

  const viaWithoutBatch = (method: string, path: string, opts?: Parameters<typeof call>[5]) => call(WITHOUT_BATCH, port, caPem, method, path, opts)
  const viaFull = (method: string, path: string, opts?: Parameters<typeof call>[5]) => call(FULL, port, caPem, method, path, opts)

  it('answers a request for a group the server does not serve through the peer that does, as the caller', async () => {
    // The server without batch does not list it in its own discovery.
    const groups = JSON.parse((await viaWithoutBatch('GET', '/apis', { cert: jane })).body) as { groups: { name: string }[] }
    assert.ok(!groups.groups.some((g) => g.name === 'batch'))
    await eventually('the peer serving batch/v1 is known', async () => (await viaWithoutBatch('GET', '/apis/batch/v1/namespaces/default/jobs', { cert: jane })).status === 200)
    const created = await viaWithoutBatch('POST', '/apis/batch/v1/namespaces/default/jobs', { cert: jane, body: job('via-peer') })
    // The proxy client certificate's own user may do nothing: the peer created it as jane.
    assert.equal(created.status, 201, created.body)
    const stored = await viaFull('GET', '/apis/batch/v1/namespaces/default/jobs/via-peer', { cert: jane })
    assert.equal(stored.status, 200)
    // jane has no right in kube-system: the first server refuses before anything is forwarded.
    const refused = await viaWithoutBatch('GET', '/apis/batch/v1/namespaces/kube-system/jobs', { cert: jane })
    assert.equal(refused.status, 403)
    assert.match(JSON.parse(refused.body).message, /User "jane" cannot list resource "jobs"/)
  })

  it('relays the peer\'s answer unchanged to curl over HTTP/2 (indented by the peer, not indented again)', async () => {
    await eventually('the peer serving batch/v1 is known', async () => (await viaWithoutBatch('GET', '/apis/batch/v1/namespaces/default/jobs', { cert: jane })).status === 200)
    // curl's user agent makes upstream indent JSON; the answer comes indented from the peer and must reach the client whole.
    const answer = await new Promise<{ status: number; rstCode: number; body: string }>((resolve, reject) => {
      const session = http2Connect(`https://${WITHOUT_BATCH}:${port}`, { ca: caPem, servername: 'kubernetes.default.svc', cert: jane.certificate, key: jane.privateKey })
      session.on('error', reject)
      const stream = session.request({ ':path': '/apis/batch/v1/namespaces/default/jobs', 'user-agent': 'curl/7.88.1', accept: '*/*' })
      let status = 0
      let body = ''
      stream.setEncoding('utf8')
      stream.on('response', (headers) => (status = Number(headers[':status'])))
      stream.on('data', (chunk: string) => (body += chunk))
      stream.on('error', () => {})
      stream.on('close', () => {
        session.close()
        resolve({ status, rstCode: stream.rstCode ?? 0, body })
      })
      stream.end()
    })
    assert.equal(answer.rstCode, 0)
    assert.equal(answer.status, 200)
    const direct = await viaFull('GET', '/apis/batch/v1/namespaces/default/jobs', { cert: jane, headers: { 'user-agent': 'curl/7.88.1' } })
    assert.equal(answer.body.replace(/"resourceVersion": "\d+"/, ''), direct.body.replace(/"resourceVersion": "\d+"/, ''))
    assert.match(answer.body, /^\{\n {2}"kind": "JobList",\n/)
  })

  it('reaches through the peer a group the older emulated release does not serve', async () => {
    const older = daemons[1]!
    const version = JSON.parse(await older.ok('get', '--raw', '/version')) as Record<string, string>
    assert.equal(version['emulationMinor'], '31')
    assert.ok(!(await older.ok('get', '--raw', '/apis')).includes('"resource.k8s.io"'))
    const file = older.manifest('deviceclass.json', JSON.stringify({ apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name: 'gpu' }, spec: {} }))
    await older.ok('create', '--raw', '/apis/resource.k8s.io/v1/deviceclasses', '-f', file)
    const stored = JSON.parse(await daemons[0]!.ok('get', '--raw', '/apis/resource.k8s.io/v1/deviceclasses/gpu')) as { metadata: { name: string } }
    assert.equal(stored.metadata.name, 'gpu')
  })

  it('still gives 404 for a group/version no server serves', async () => {
    const answer = await viaWithoutBatch('GET', '/apis/batch/v9/namespaces/default/jobs', { cert: jane })
    assert.equal(answer.status, 404)
  })

  it('treats a client claiming to be a forwarding peer without the proxy certificate as any client', async () => {
    const forged = { 'x-kubernetes-peer-proxied': 'true', 'X-Remote-User': 'system:admin', 'X-Remote-Group': 'system:masters' }
    const anonymous = await viaFull('POST', '/apis/batch/v1/namespaces/kube-system/jobs', { headers: forged, body: job('forged-anonymous') })
    assert.ok(anonymous.status === 401 || anonymous.status === 403, `${anonymous.status} ${anonymous.body}`)
    const asJane = await viaFull('POST', '/apis/batch/v1/namespaces/kube-system/jobs', { cert: jane, headers: forged, body: job('forged-jane') })
    assert.equal(asJane.status, 403)
    assert.match(JSON.parse(asJane.body).message, /User "jane"/)
    const list = await daemons[0]!.ok('get', 'jobs', '-n', 'kube-system', '-o', 'name')
    assert.equal(list.trim(), '')
  })
})
