/**
 * A real etcd for the etcd backend's tests: one member on free loopback
 * ports, its data in a fresh temporary directory, started, stopped and
 * started again with the same data (for outage tests), and removed at the
 * end. etcd must be on PATH (CI installs Debian's etcd-server); without it
 * the suites fail with a message saying so, they are never skipped.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Etcd3 } from 'etcd3'

export interface EtcdServerTls {
  /** PEM contents; written next to the data directory. */
  ca: string
  cert: string
  key: string
}

export interface EtcdServerOptions {
  /** Serve clients over TLS and require client certificates signed by `ca`. */
  tls?: EtcdServerTls
}

const NOT_INSTALLED =
  'etcd is not on PATH: the etcd storage tests need a real etcd 3.4+ (Debian/Ubuntu: apt-get install etcd-server)'

/** etcd logs this (zap JSON) once it accepts client connections. */
const SERVING = /"msg":"serving client traffic/

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/**
 * A port found free can be taken by another test's process before etcd binds it (the suites run files side by
 * side): such a start is tried again on other ports, a few times. Any other failure is the caller's.
 */
async function onFreshPortsIfTaken<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start()
    } catch (err) {
      if (attempt >= attempts || !String(err).includes('address already in use')) throw err
    }
  }
}

export class EtcdServer {
  private process: ChildProcess | undefined
  private log = ''

  private constructor(
    private readonly root: string,
    private readonly args: string[],
    readonly clientUrl: string,
  ) {}

  /**
   * A cluster of `size` members on loopback, each with its own ports and
   * data directory, started together (a member serves clients only once a
   * quorum has formed). Elections are slower than a lone member's, so that
   * a loaded machine does not make the members elect again and again.
   */
  static startCluster(size = 3): Promise<EtcdCluster> {
    return onFreshPortsIfTaken(() => EtcdServer.startClusterOnce(size))
  }

  private static async startClusterOnce(size: number): Promise<EtcdCluster> {
    const token = `test-${crypto.randomUUID()}`
    const members: { name: string; root: string; clientUrl: string; peerUrl: string }[] = []
    for (let i = 0; i < size; i++) {
      const [clientPort, peerPort] = [await freePort(), await freePort()]
      const root = await mkdtemp(join(tmpdir(), `etcd-member${i}-`))
      members.push({ name: `member${i}`, root, clientUrl: `http://127.0.0.1:${clientPort}`, peerUrl: `http://127.0.0.1:${peerPort}` })
    }
    const initialCluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',')
    const servers = members.map(
      (m) =>
        new EtcdServer(
          m.root,
          [
            `--name=${m.name}`,
            `--data-dir=${join(m.root, 'data')}`,
            `--listen-client-urls=${m.clientUrl}`,
            `--advertise-client-urls=${m.clientUrl}`,
            `--listen-peer-urls=${m.peerUrl}`,
            `--initial-advertise-peer-urls=${m.peerUrl}`,
            `--initial-cluster=${initialCluster}`,
            `--initial-cluster-token=${token}`,
            '--initial-cluster-state=new',
            '--heartbeat-interval=100',
            '--election-timeout=1000',
            '--logger=zap',
            '--log-outputs=stderr',
          ],
          m.clientUrl,
        ),
    )
    const cluster = new EtcdCluster(servers)
    try {
      await Promise.all(servers.map((s) => s.resume()))
    } catch (err) {
      await cluster.destroy()
      throw err
    }
    return cluster
  }

  static start(opts: EtcdServerOptions = {}): Promise<EtcdServer> {
    return onFreshPortsIfTaken(() => EtcdServer.startOnce(opts))
  }

  private static async startOnce(opts: EtcdServerOptions): Promise<EtcdServer> {
    const root = await mkdtemp(join(tmpdir(), 'etcd-test-'))
    const [clientPort, peerPort] = [await freePort(), await freePort()]
    const scheme = opts.tls ? 'https' : 'http'
    const clientUrl = `${scheme}://127.0.0.1:${clientPort}`
    const peerUrl = `http://127.0.0.1:${peerPort}`
    const args = [
      '--name=test',
      `--data-dir=${join(root, 'data')}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=test=${peerUrl}`,
      // One member elects itself: short ticks make start-up and restarts quick.
      '--heartbeat-interval=50',
      '--election-timeout=500',
      '--logger=zap',
      '--log-outputs=stderr',
    ]
    if (opts.tls) {
      const files = { ca: join(root, 'ca.crt'), cert: join(root, 'server.crt'), key: join(root, 'server.key') }
      await Promise.all([writeFile(files.ca, opts.tls.ca), writeFile(files.cert, opts.tls.cert), writeFile(files.key, opts.tls.key)])
      args.push(`--cert-file=${files.cert}`, `--key-file=${files.key}`, `--trusted-ca-file=${files.ca}`, '--client-cert-auth')
    }
    const server = new EtcdServer(root, args, clientUrl)
    try {
      await server.resume()
    } catch (err) {
      await rm(root, { recursive: true, force: true })
      throw err
    }
    return server
  }

  get running(): boolean {
    return this.process !== undefined
  }

  /** Starts the member (again), with the data it had, on the same ports. */
  async resume(): Promise<void> {
    if (this.process) return
    this.log = ''
    const child = spawn('etcd', this.args, { stdio: ['ignore', 'ignore', 'pipe'] })
    this.process = child
    let settle: ((err?: Error) => void) | undefined
    const ready = new Promise<void>((resolve, reject) => {
      settle = (err) => {
        settle = undefined
        clearTimeout(timer)
        if (err) reject(err)
        else resolve()
      }
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      settle?.(new Error(`etcd did not start within 15s:\n${this.log.slice(-2000)}`))
    }, 15000)
    child.once('error', (err: NodeJS.ErrnoException) => settle?.(err.code === 'ENOENT' ? new Error(NOT_INSTALLED) : err))
    child.once('exit', (code) => {
      if (this.process === child) this.process = undefined
      settle?.(new Error(`etcd exited with ${String(code)}:\n${this.log.slice(-2000)}`))
    })
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      this.log = (this.log + chunk).slice(-20000)
      if (SERVING.test(this.log)) settle?.()
    })
    await ready
  }

  /** Stops the member, keeping its data for `resume()`. */
  async pause(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.process
    if (!child) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill(signal)
    await exited
    this.process = undefined
  }

  /** Stops the member and removes its data. */
  async destroy(): Promise<void> {
    await this.pause('SIGTERM')
    await rm(this.root, { recursive: true, force: true })
  }

  /** A plain etcd3 client, for tests that look at etcd itself (no TLS). */
  client(): Etcd3 {
    return new Etcd3({ hosts: [this.clientUrl] })
  }

  /** Deletes every key, so each test store starts empty (revisions keep counting). */
  async wipe(): Promise<void> {
    const client = this.client()
    try {
      await client.kv.deleteRange({ key: Buffer.from([0]), range_end: Buffer.from([0]) })
    } finally {
      client.close()
    }
  }
}

/** Several etcd members forming one cluster (EtcdServer.startCluster). */
export class EtcdCluster {
  constructor(readonly members: readonly EtcdServer[]) {}

  /** Every member's client URL, for `--etcd-servers`. */
  get clientUrls(): string[] {
    return this.members.map((m) => m.clientUrl)
  }

  /** The index of the member the cluster has as its leader, asked of the members that are up; -1 when none answers. */
  async leader(): Promise<number> {
    const ids: string[] = []
    let leader = ''
    for (const member of this.members) {
      if (!member.running) {
        ids.push('')
        continue
      }
      const client = new Etcd3({ hosts: [member.clientUrl], defaultCallOptions: () => ({ deadline: Date.now() + 5000 }) })
      try {
        const status = await client.maintenance.status()
        ids.push(status.header.member_id)
        leader = status.leader
      } catch {
        ids.push('')
      } finally {
        client.close()
      }
    }
    return leader ? ids.indexOf(leader) : -1
  }

  /** Stops every member and removes their data (members already stopped included). */
  async destroy(): Promise<void> {
    await Promise.all(this.members.map((m) => m.destroy()))
  }
}
