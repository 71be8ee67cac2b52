/**
 * Upstream's kube-apiserver as a target of the daemon suite, side by side
 * with the daemon in one run: a binary the caller built (for instance
 * `make WHAT=cmd/kube-apiserver` in the Kubernetes source tree that the
 * conformance suite's e2e.test is built from), on the same etcd under a key prefix
 * of its own, serving the daemon's certificate, with the same static bearer
 * token (group system:masters) and RBAC. Nothing of the project runs in it:
 * its figures are upstream's own on this machine at this moment.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { freePort } from '../e2e/daemon.js'
import { type DaemonTarget, stopChild, TOKEN } from './tls-targets.js'

const READY_TIMEOUT_MS = 60_000
const READY_POLL_MS = 20

export interface UpstreamOptions {
  /** The kube-apiserver binary. */
  binary: string
  /** A fresh directory for its token file, service account keys and generated files. */
  dir: string
  /** The directory holding the daemon's serving certificate (apiserver.crt, apiserver.key). */
  certDir: string
  etcdUrl: string
  maxSockets: number
}

/** The status of GET `path` with the bench's token; 0 when the server does not answer yet. */
function statusOf(port: number, path: string): Promise<number> {
  return new Promise((done) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${TOKEN}` }, rejectUnauthorized: false, agent: false }, (res) => {
      res.resume()
      res.once('end', () => done(res.statusCode ?? 0))
    })
    req.once('error', () => done(0))
    req.end()
  })
}

/** Starts upstream and resolves once its `/readyz` answers 200 (readyMs: from the spawn). */
export async function startUpstream(label: string, opts: UpstreamOptions): Promise<DaemonTarget> {
  await mkdir(opts.dir, { recursive: true })
  const tokens = join(opts.dir, 'tokens.csv')
  await writeFile(tokens, `${TOKEN},bench-admin,bench-admin,"system:masters"\n`)
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const signingKey = join(opts.dir, 'sa.key')
  const verifyingKey = join(opts.dir, 'sa.pub')
  await writeFile(signingKey, privateKey.export({ type: 'pkcs8', format: 'pem' }))
  await writeFile(verifyingKey, publicKey.export({ type: 'spki', format: 'pem' }))
  const port = await freePort()
  const etcdPrefix = `/${label.replace(/\W+/g, '-')}`
  const args = [
    `--etcd-servers=${opts.etcdUrl}`,
    `--etcd-prefix=${etcdPrefix}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    // 1.20 also serves plain HTTP on 8080 unless told not to.
    '--insecure-port=0',
    `--cert-dir=${join(opts.dir, 'certs')}`,
    `--tls-cert-file=${join(opts.certDir, 'apiserver.crt')}`,
    `--tls-private-key-file=${join(opts.certDir, 'apiserver.key')}`,
    `--token-auth-file=${tokens}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${verifyingKey}`,
    `--service-account-signing-key-file=${signingKey}`,
    '--service-cluster-ip-range=10.0.0.0/24',
  ]
  const t0 = performance.now()
  const child: ChildProcess = spawn(opts.binary, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  const log: string[] = []
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => {
    if (log.length < 400) log.push(chunk)
  })
  const agent = new Agent({ keepAlive: true, maxSockets: opts.maxSockets })
  const stop = async () => (agent.destroy(), await stopChild(child))
  const exited = new Promise<never>((_, fail) => {
    child.once('exit', (code) => fail(new Error(`${opts.binary} exited with ${code}:\n${log.join('').slice(-4000)}`)))
    // A binary that is not there, or not executable: said at once, not after the wait for readiness.
    child.once('error', (err) => fail(new Error(`--upstream ${opts.binary}: ${err.message}`)))
  })
  exited.catch(() => {})
  const deadline = t0 + READY_TIMEOUT_MS
  /** Polls `path` until it answers 200; stops upstream and throws, saying `what`, past the deadline. */
  const answers = async (path: string, what: string): Promise<void> => {
    while ((await Promise.race([statusOf(port, path), exited])) !== 200) {
      if (performance.now() > deadline) {
        await stop()
        throw new Error(`${opts.binary} ${what} within ${READY_TIMEOUT_MS / 1000} s:\n${log.join('').slice(-4000)}`)
      }
      await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS))
    }
  }
  await answers('/readyz', 'was not ready')
  const readyMs = performance.now() - t0
  // Its namespace controller creates `default` a moment after /readyz first answers 200: the loads write there.
  await answers('/api/v1/namespaces/default', 'did not create the default namespace')
  return { label, backend: 'etcd', etcdPrefix, certDir: opts.certDir, port, pid: child.pid ?? 0, agent, readyMs, stop }
}
