/**
 * The throughput of `kubectl port-forward` through the daemon against a
 * direct loopback connection to the same sink: the daemon built from dist,
 * the test node agent over HTTPS (its SPDY/3.1 port-forward, in
 * test/integration/spdy-agent.ts), and a TCP sink that counts what arrives
 * and answers the count when the sender ends. The path measured is kubectl,
 * the server's upgrade pass-through and the agent's SPDY framing; the
 * server only copies bytes. Figures only: nothing passes or fails.
 *
 * Run alone with `npm run build && node --import tsx test/bench/port-forward.ts`:
 * it rewrites its own section of docs/benchmarks.md (between the markers).
 */
import { connect, createServer, type Server } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCertificateAuthority, issueClientCertificate } from '../../core/pki/certificates.js'
import { Daemon, eventually } from '../e2e/daemon.js'
import { startNodeAgent } from '../integration/node-agent-server.js'
import { podPorts } from '../integration/spdy-agent.js'
import { median } from './load.js'
import { machineLine } from './report.js'
import { replaceSection } from './section.js'

const MIB = 1024 * 1024
const SIZE = Number(process.env.BENCH_MIB ?? 64) * MIB
const ROUNDS = 5

/** Sends SIZE bytes to `port` and waits for the sink's count; MiB/s. */
function sendThrough(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const chunk = Buffer.alloc(MIB, 7)
    const started = process.hrtime.bigint()
    const socket = connect({ host: '127.0.0.1', port }, () => {
      let sent = 0
      const pump = (): void => {
        while (sent < SIZE) {
          sent += chunk.length
          if (!socket.write(chunk)) return void socket.once('drain', pump)
        }
        socket.end()
      }
      pump()
    })
    let answer = ''
    socket.on('data', (d) => (answer += String(d)))
    socket.on('error', reject)
    socket.on('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      if (Number(answer) !== SIZE) return reject(new Error(`the sink counted ${answer || 'nothing'} of ${SIZE} bytes`))
      resolve(SIZE / MIB / seconds)
    })
  })
}

async function main(): Promise<void> {
  const sink: Server = createServer((socket) => {
    let count = 0
    socket.on('data', (d: Buffer) => (count += d.length))
    socket.on('end', () => socket.end(String(count)))
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
  const sinkPort = (sink.address() as { port: number }).port
  podPorts.set(80, sinkPort)
  const clientCA = await createCertificateAuthority({ commonName: 'bench-agent-client-ca' })
  const client = await issueClientCertificate(clientCA, { commonName: 'bench-apiserver', organizations: [] })
  const agent = await startNodeAgent(clientCA.certificate)
  const dir = mkdtempSync(join(tmpdir(), 'bench-port-forward-'))
  const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
  const daemon = await Daemon.start([
    `--nodeagent-certificate-authority=${file('ca.crt', agent.servingCA)}`,
    `--nodeagent-client-certificate=${file('client.crt', client.certificate)}`,
    `--nodeagent-client-key=${file('client.key', client.privateKey)}`,
    '--nodeagent-preferred-address-types=InternalIP',
  ])
  const forward = { kill: () => {} }
  try {
    await daemon.ok('apply', '-f', daemon.manifest('bench.yaml', `apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {addresses: [{type: InternalIP, address: 127.0.0.1}], daemonEndpoints: {kubeletEndpoint: {Port: ${agent.port}}}}
---
apiVersion: v1
kind: Pod
metadata: {name: sink, namespace: default}
spec: {nodeName: node-1, containers: [{name: sink, image: sink}]}
`))
    await daemon.ok('patch', 'pod', 'sink', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"}}')
    const pf = daemon.kubectlStream('port-forward', 'pod/sink', ':80')
    forward.kill = () => pf.child.kill('SIGKILL')
    let local = 0
    await eventually(() => {
      const m = /Forwarding from 127\.0\.0\.1:(\d+) -> 80/.exec(pf.output())
      if (!m) throw new Error(pf.output())
      local = Number(m[1])
    }, 20_000)
    const direct: number[] = []
    const forwarded: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      direct.push(await sendThrough(sinkPort))
      forwarded.push(await sendThrough(local))
    }
    const d = median(direct)
    const f = median(forwarded)
    const fmt = (n: number) => `${n.toFixed(0)} MiB/s`
    const section = `<!-- port-forward-throughput: begin -->
## Port-forward throughput (kubectl through the server against direct loopback)

Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machineLine()}, in one run of
\`node --import tsx test/bench/port-forward.ts\`.

One TCP client sends ${SIZE / MIB} MiB to a sink that counts them and answers the count,
once directly on loopback, once through \`kubectl port-forward\` (kubectl, the
server's pass-through of the SPDY/3.1 upgrade to the node agent over TLS, the
test agent's SPDY framing, then loopback to the sink). ${ROUNDS} rounds alternate;
the figures are medians.

| ${SIZE / MIB} MiB one way | throughput | rounds |
| --- | --- | --- |
| direct loopback | ${fmt(d)} | ${direct.map((n) => n.toFixed(0)).join(', ')} |
| through kubectl port-forward | ${fmt(f)} | ${forwarded.map((n) => n.toFixed(0)).join(', ')} |

The forwarded stream runs at **${((f / d) * 100).toFixed(1)}%** of direct loopback (load average
${loadavg()[0]!.toFixed(1)} on this shared machine). The server copies bytes with \`pipe\`
(backpressure both ways); most of the cost is kubectl's and the agent's SPDY framing
and the two TLS hops.
<!-- port-forward-throughput: end -->
`
    await replaceSection(join(import.meta.dirname, '..', '..'), '<!-- port-forward-throughput: begin -->', '<!-- port-forward-throughput: end -->', section)
    process.stdout.write(section)
  } finally {
    forward.kill()
    await daemon.stop()
    await agent.close()
    sink.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
