import assert from 'node:assert/strict'
import { platform } from 'node:os'
import { it } from 'node:test'
import { reusePortWorks } from '../../../runtimes/node/adapter/reuse-port.js'

/** Node's documented first versions with `reusePort` on listen(): 22.12 and 23.1 (23.0 lacks it). */
function nodeDocumentsReusePort(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12)
}

it('finds SO_REUSEPORT by binding, agreeing with the Node versions that document it', async () => {
  // The test runs under Node; Bun and Deno are covered end to end (test/e2e/port-sharing.test.ts).
  const expected = platform() === 'linux' && nodeDocumentsReusePort(process.versions.node)
  assert.equal(await reusePortWorks(), expected, `Node ${process.versions.node} on ${platform()}`)
})
