/**
 * The daemon's TLS settings from its flags: cipher suites, minimum version,
 * SNI certificates, and the re-reading of certificate files when they
 * change, so that a rotated certificate is served without a restart (as
 * upstream's dynamic serving certificates). A changed pair that does not
 * load (a half-written file, a key of another certificate) is logged and
 * the pair in effect stays until the files are whole again.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs'
import type { SecureContextOptions } from 'node:tls'
import type { Logger } from '../../../core/logging/logger.js'
import type { DaemonFlags } from './flags.js'
import type { ServeTlsOptions, TlsListener } from '../adapter/serve.js'
import { sniSelector, type SniPair } from '../adapter/sni.js'
import { minTlsVersion, opensslCipherList } from '../adapter/tls-options.js'

/** How often certificate files are looked at; a rename over the file (the usual rotation) is seen too. */
const POLL_MS = 1000

export type ListenerTls = Pick<ServeTlsOptions, 'ciphers' | 'minVersion' | 'sniContext' | 'http2MaxStreams' | 'goawayChance'>

export interface ServingTls {
  listenerOptions: ListenerTls
  /** Starts watching the certificate files; the function returned stops it. */
  watch(listener: TlsListener): () => void
}

function readSniPairs(flags: DaemonFlags): SniPair[] {
  return flags.listener.sniCertKeys.map((entry) => ({
    cert: readFileSync(entry.certFile, 'utf8'),
    key: readFileSync(entry.keyFile, 'utf8'),
    names: entry.names,
  }))
}

/** Throws (a start-up error for the caller) when a cipher is unknown or an SNI pair cannot be loaded. */
export function servingTls(flags: DaemonFlags, clientCA: string, logger: Logger): ServingTls {
  const ciphers = opensslCipherList(flags.listener.cipherSuites)
  const minVersion = minTlsVersion(flags.listener.minVersion)
  const base: SecureContextOptions = { ca: clientCA, minVersion, ...(ciphers ? { ciphers } : {}) }
  let select = flags.listener.sniCertKeys.length > 0 ? sniSelector(readSniPairs(flags), base) : undefined
  const listenerOptions: ListenerTls = {
    minVersion,
    ...(ciphers ? { ciphers } : {}),
    ...(select ? { sniContext: (name: string) => select?.(name) } : {}),
    http2MaxStreams: flags.listener.http2MaxStreams,
    goawayChance: flags.listener.goawayChance,
  }

  const watch = (listener: TlsListener): (() => void) => {
    const servingFiles = flags.tlsCertFile && flags.tlsPrivateKeyFile ? [flags.tlsCertFile, flags.tlsPrivateKeyFile] : []
    const sniFiles = flags.listener.sniCertKeys.flatMap((entry) => [entry.certFile, entry.keyFile])
    const reloadServing = (): void => {
      if (!flags.tlsCertFile || !flags.tlsPrivateKeyFile) return
      try {
        listener.setServingCertificate({ cert: readFileSync(flags.tlsCertFile, 'utf8'), key: readFileSync(flags.tlsPrivateKeyFile, 'utf8') })
        logger.info({ certFile: flags.tlsCertFile }, 'serving certificate reloaded')
      } catch (err) {
        logger.warn({ certFile: flags.tlsCertFile, err: (err as Error).message }, 'serving certificate not reloaded; the previous one stays')
      }
    }
    const reloadSni = (): void => {
      try {
        select = sniSelector(readSniPairs(flags), base)
        logger.info({}, 'SNI certificates reloaded')
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'SNI certificates not reloaded; the previous ones stay')
      }
    }
    const watched: string[] = []
    const follow = (files: readonly string[], reload: () => void): void => {
      for (const file of files) {
        watched.push(file)
        watchFile(file, { interval: POLL_MS, persistent: false }, (now, before) => {
          if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) reload()
        })
      }
    }
    follow(servingFiles, reloadServing)
    follow(sniFiles, reloadSni)
    return () => {
      for (const file of watched) unwatchFile(file)
    }
  }
  return { listenerOptions, watch }
}
