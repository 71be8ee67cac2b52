/**
 * Whether this runtime's listen() really binds with SO_REUSEPORT
 * (`--permit-port-sharing`), found out by trying rather than by version.
 *
 * Node before 22.12 (and 23.0) ignores the `reusePort` option without a word,
 * Bun and Deno honour it on Linux, and other platforms differ again: a
 * version table would be wrong somewhere, and a runtime that silently drops
 * the option must count as not supporting it. So two listeners are bound to
 * one loopback port with the option: only if the second bind succeeds does
 * the option take effect. The daemon's TLS and HTTP/2 servers are node:net
 * servers underneath on all three runtimes, so what holds for a plain one
 * holds for them.
 */
import { createServer, type ListenOptions, type Server } from 'node:net'

function listenOn(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    // `reusePort` is not in Node 20's types; the runtime decides what it does with it.
    const options: ListenOptions & { reusePort: boolean } = { host, port, reusePort: true }
    server.listen(options, () => {
      server.off('error', reject)
      const address = server.address()
      resolve(typeof address === 'object' && address ? address.port : 0)
    })
  })
}

function closeQuietly(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve()
    server.close(() => resolve())
  })
}

/** Binds two listeners to one loopback port with `reusePort`; true when both hold it. Never throws. */
export async function reusePortWorks(): Promise<boolean> {
  const onIPv4 = await reusePortWorksOn('127.0.0.1')
  // A host without IPv4 loopback says nothing about the option: ask IPv6's.
  return onIPv4 === 'no-address' ? (await reusePortWorksOn('::1')) === true : onIPv4
}

async function reusePortWorksOn(host: string): Promise<boolean | 'no-address'> {
  const first = createServer()
  const second = createServer()
  try {
    const port = await listenOn(first, host, 0)
    await listenOn(second, host, port)
    return true
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT') return 'no-address'
    // EADDRINUSE: the option was ignored; anything else (e.g. ENOTSUP on a platform without it): not available either.
    return false
  } finally {
    await Promise.all([closeQuietly(first), closeQuietly(second)])
  }
}
