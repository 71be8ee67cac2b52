/**
 * The entry of the package's classic-script bundle
 * (dist/runtimes/node/library-script.cjs, written by tools/bundle.ts): both
 * of the package's entry points, `.` and `./node`, in one script, which
 * library.ts runs with a V8 code cache (script-code-cache.ts). One script
 * for both keeps one copy of every module, as the ES module build's shared
 * chunks do: one StatusError class, one MemoryStorage.
 */
import { useLazyResponseBodies } from '../../core/http/bytes-response.js'
import { useSha256Hex } from '../../core/authn/constant-time.js'
import { nativeSha256Hex } from './adapter/native-sha256.js'

export * as core from '../../core/index.js'
// Node's Response makes a stream for every body at once; in-process callers read answers through its members.
useLazyResponseBodies()
// Bearer tokens are digested on every request they come with: Node's SHA-256 rather than the JavaScript one.
if (nativeSha256Hex) useSha256Hex(nativeSha256Hex)
/** The `./node` entry point's modules, evaluated when it is first imported: a program that imports only `.` loads none of the daemon's. */
export const node = (): Promise<typeof import('./index.js')> => import('./index.js')
