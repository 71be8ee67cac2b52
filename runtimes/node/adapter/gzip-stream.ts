/**
 * The `gzipStream` port for Node: zlib at level 1 (BestSpeed), upstream's
 * choice for its answers since a megabyte at the default level cost several
 * times the CPU for a few per cent fewer bytes. zlib compresses on libuv's
 * thread pool, off the serving thread.
 */
import { Duplex } from 'node:stream'
import { constants, createGzip } from 'node:zlib'
import type { GzipStream, StreamStage } from '../../../core/http/filters/compression.js'

export const nodeGzipStream: GzipStream = () =>
  Duplex.toWeb(createGzip({ level: constants.Z_BEST_SPEED })) as unknown as StreamStage
