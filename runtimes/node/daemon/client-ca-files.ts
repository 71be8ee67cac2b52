/**
 * `--client-ca-file` and `--requestheader-client-ca-file`, read at start and
 * again whenever either changes on disk (upstream's dynamic CA content), so
 * a rotated CA is trusted without a restart. A file that cannot be read or
 * parsed leaves the bundles in use as they are, with an error in the log.
 */
import { readFile } from 'node:fs/promises'
import { unwatchFile, watchFile } from 'node:fs'
import type { Logger } from '../../../core/logging/logger.js'
import { type ClientCABundles, parseBundle } from '../adapter/client-cas.js'

/** How often the files' modification times are looked at: cheap (one stat each), and soon enough for a rotation. */
const POLL_INTERVAL_MS = 1000

export interface ClientCAFiles {
  /** `--client-ca-file`; absent: `fallbackClientCA` (the CA the daemon generated) is used and never changes. */
  clientCaFile?: string
  requestHeaderCaFile?: string
  fallbackClientCA: string
}

/** Reads and checks both bundles; throws naming the flag for a file that is unreadable or holds no certificate. */
export async function readClientCABundles(files: ClientCAFiles): Promise<ClientCABundles> {
  const read = async (path: string, flag: string): Promise<string> => {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      throw new Error(`${flag}: cannot read ${path}: ${(err as Error).message}`)
    }
    parseBundle(text, flag)
    return text
  }
  return {
    clientCA: files.clientCaFile ? await read(files.clientCaFile, '--client-ca-file') : files.fallbackClientCA,
    ...(files.requestHeaderCaFile ? { requestHeaderCA: await read(files.requestHeaderCaFile, '--requestheader-client-ca-file') } : {}),
  }
}

/** Calls `apply` with both bundles after either file changed; returns the function that stops watching. */
export function watchClientCAFiles(files: ClientCAFiles, apply: (bundles: ClientCABundles) => void, logger: Logger): () => void {
  const paths = [files.clientCaFile, files.requestHeaderCaFile].filter((p): p is string => Boolean(p))
  let reloading = Promise.resolve()
  const reload = (): void => {
    // One reload at a time, in order: two quick writes end with the last content applied.
    reloading = reloading.then(async () => {
      try {
        apply(await readClientCABundles(files))
        logger.info({ files: paths }, 'reloaded the client CA bundles')
      } catch (err) {
        logger.error({ err: (err as Error).message }, 'cannot reload the client CA bundles; keeping the ones in use')
      }
    })
  }
  const onChange = (current: { mtimeMs: number; size: number }, previous: { mtimeMs: number; size: number }): void => {
    if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size) reload()
  }
  for (const path of paths) watchFile(path, { interval: POLL_INTERVAL_MS, persistent: false }, onChange)
  return () => {
    for (const path of paths) unwatchFile(path, onChange)
  }
}
