/**
 * What `componentstatuses` checks, as upstream's kube-apiserver does: the
 * controller manager's and the scheduler's `/healthz` over HTTPS on this
 * host at their default secure ports (certificates not verified: they are
 * self-signed by default), and each etcd cluster the daemon stores in
 * (`etcd-0` the main one, then each `--kvstore-servers-overrides` cluster).
 * On the embedded store there is no etcd to report.
 */
import { request } from 'node:https'
import type { ComponentHealth, ComponentProbe } from '../../../core/resources/core/cluster-info.js'

/** Upstream's probe time-out for every component. */
const PROBE_TIMEOUT_MS = 20_000
/** Upstream reads at most this much of a probe's answer. */
const MAX_BODY_BYTES = 10 * 1024
/** kube-controller-manager's and kube-scheduler's default secure ports. */
const CONTROLLER_MANAGER_PORT = 10257
const SCHEDULER_PORT = 10259

/** Node's error for a failed request, worded as Go's HTTP client words it (what upstream shows). */
function goClientError(url: string, host: string, port: number, err: NodeJS.ErrnoException): string {
  if (err.code === 'ECONNREFUSED') return `Get "${url}": dial tcp ${host}:${port}: connect: connection refused`
  if (err.code === 'ETIMEDOUT') return `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`
  return `Get "${url}": ${err.message}`
}

/** One GET of `/healthz`, judged as upstream's HTTP prober judges it. */
export function httpsHealthProbe(name: string, host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): ComponentProbe {
  const url = `https://${host}:${port}/healthz`
  const check = (): Promise<ComponentHealth> =>
    new Promise((resolve) => {
      const req = request(url, { rejectUnauthorized: false, headers: { 'user-agent': 'kube-probe', accept: '*/*' }, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          if (size < MAX_BODY_BYTES) chunks.push(chunk.subarray(0, MAX_BODY_BYTES - size))
          size += chunk.length
        })
        res.on('error', (err) => resolve({ status: 'False', message: '', error: err.message }))
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8')
          const code = res.statusCode ?? 0
          // 2xx is healthy with the body as the message; a redirect is inconclusive; anything else failed.
          if (code >= 200 && code < 300) resolve({ status: 'True', message: body, error: '' })
          else if (code >= 300 && code < 400) resolve({ status: 'Unknown', message: `Probe terminated redirects, Response body: ${body}`, error: '' })
          else resolve({ status: 'False', message: `HTTP probe failed with statuscode: ${code}`, error: '' })
        })
      })
      req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })))
      // A request that never got an answer is a failure whose message is the client's error, as upstream's prober reports it.
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: 'False', message: goClientError(url, host, port, err), error: '' }))
      req.end()
    })
  return { name, check }
}

/** An etcd cluster's health: `ok`, or the error that the health read met. */
export function storageClusterProbe(name: string, checkHealth: (timeoutMs: number) => Promise<void>): ComponentProbe {
  return {
    name,
    check: () =>
      checkHealth(PROBE_TIMEOUT_MS).then(
        (): ComponentHealth => ({ status: 'True', message: 'ok', error: '' }),
        (err: unknown): ComponentHealth => ({ status: 'False', message: '', error: err instanceof Error ? err.message : String(err) }),
      ),
  }
}

/** The components a daemon reports: upstream's two on this host, then each etcd cluster. */
export function daemonComponentProbes(storageClusters: readonly ((timeoutMs: number) => Promise<void>)[]): ComponentProbe[] {
  return [
    httpsHealthProbe('controller-manager', '127.0.0.1', CONTROLLER_MANAGER_PORT),
    httpsHealthProbe('scheduler', '127.0.0.1', SCHEDULER_PORT),
    ...storageClusters.map((check, i) => storageClusterProbe(`etcd-${i}`, check)),
  ]
}
