/**
 * The `yamlDecoder` port for Node (and Bun and Deno, which run this code
 * unchanged): large YAML bodies are decoded in one worker thread, whose
 * heap takes the yaml package's garbage, so its collections no longer stop
 * the serving thread. One body at a time, behind a bounded queue; each
 * within a deadline and a heap limit. A worker past its deadline is
 * stopped, one that dies (out of memory) is replaced at the next body; a
 * worker that cannot start at all leaves decoding on the serving thread.
 */
import { Worker } from 'node:worker_threads'
import type { YamlDecoder, YamlJsonAnswer } from '../../../core/http/yaml-off-thread.js'
import { type Logger, silentLogger } from '../../../core/logging/logger.js'
import type { WORKER_READY, YamlJob } from '../yaml-worker.js'

export interface NodeYamlDecoderOptions {
  /** Bodies of fewer characters stay on the serving thread. @default 16 KiB */
  offThreadFrom?: number
  /** Bodies that may wait behind the one being decoded; one more is answered 429. @default 8 */
  maxQueued?: number
  /**
   * How long the worker may take over one body before it is stopped (504);
   * a worker starting has as long again to load. @default 30 s
   */
  timeoutMs?: number
  /** The worker's heap limit (V8's old generation); past it the worker dies and the body is answered 500. @default 512 (a 3 MiB body of 140000 keys fits in 256) */
  maxHeapMb?: number
  /** @default silent */
  logger?: Logger
}

export interface NodeYamlDecoder extends YamlDecoder {
  /** Bodies being decoded or waiting. */
  readonly pending: number
  /** Stops the worker; later bodies are decoded on the serving thread. */
  close(): Promise<void>
}

interface Waiting {
  text: string
  findDuplicates: boolean
  resolve: (answer: YamlJsonAnswer) => void
}

interface Running {
  id: number
  resolve: (answer: YamlJsonAnswer) => void
  timer: ReturnType<typeof setTimeout> | undefined
}

const FROM_SOURCE = import.meta.url.endsWith('.ts')
/**
 * Bun's single-file binary (`npm run build:bun`, which compiles the worker as
 * a second entry point) keeps its entry points under /$bunfs/root/, by their
 * path from the directory the entries share (runtimes/).
 */
const IN_BUN_BINARY = import.meta.url.startsWith('file:///$bunfs/')
/**
 * The worker's entry, runtimes/node/yaml-worker: TypeScript one folder up when
 * run from source (tsx, Bun, Deno); once built, JavaScript beside the bundle's
 * chunk that holds this module (dist/runtimes/node/).
 */
const WORKER_FILE = IN_BUN_BINARY
  ? new URL('/$bunfs/root/node/yaml-worker.js', import.meta.url)
  : new URL(FROM_SOURCE ? '../yaml-worker.ts' : './yaml-worker.js', import.meta.url)

function spawnWorker(maxHeapMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: maxHeapMb }
  const versions = process.versions as { bun?: string; deno?: string }
  if (FROM_SOURCE && !versions.bun && !versions.deno) {
    // Node reads TypeScript source through tsx's loader, which a worker does not inherit: it registers it first.
    const tsx = import.meta.resolve('tsx/esm/api')
    const code = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_FILE.href)}) })`
    return new Worker(code, { eval: true, resourceLimits })
  }
  // Bun finds a binary's entry point by its path, not by a file: URL.
  return new Worker(IN_BUN_BINARY ? decodeURIComponent(WORKER_FILE.pathname) : WORKER_FILE, { resourceLimits })
}

export function nodeYamlDecoder(options: NodeYamlDecoderOptions = {}): NodeYamlDecoder {
  const maxQueued = options.maxQueued ?? 8
  const timeoutMs = options.timeoutMs ?? 30_000
  const maxHeapMb = options.maxHeapMb ?? 512
  const logger = options.logger ?? silentLogger
  const waiting: Waiting[] = []
  let running: Running | undefined
  let worker: Worker | undefined
  let nextId = 1
  // No worker could start (a runtime or a bundle without the entry file): decode on the serving thread.
  let unavailable = false
  let closed = false

  const finish = (answer: YamlJsonAnswer): void => {
    const done = running
    if (!done) return
    running = undefined
    clearTimeout(done.timer)
    // An idle worker does not keep the process alive; a busy one does, as the request it serves.
    worker?.unref()
    done.resolve(answer)
    pump()
  }

  const start = (): Worker | undefined => {
    let ready = false
    let failure: Error | undefined
    let started: Worker
    try {
      started = spawnWorker(maxHeapMb)
    } catch (err) {
      unavailable = true
      logger.warn({ err: (err as Error).message }, 'YAML bodies are decoded on the serving thread: no worker thread could start')
      return undefined
    }
    started.on('message', (message: { id: number; answer: YamlJsonAnswer } | typeof WORKER_READY) => {
      if (message === 'ready') {
        ready = true
        // The body's deadline counts from now: loading the worker's modules was not its work.
        if (running && worker === started) armDeadline(running)
      } else if (running?.id === message.id) finish(message.answer)
    })
    started.on('error', (err) => {
      failure = err
    })
    started.on('exit', () => {
      // A worker stopped on purpose (deadline, close) was forgotten first.
      if (worker !== started) return
      worker = undefined
      if (!ready) {
        unavailable = true
        logger.warn({ err: failure?.message }, 'YAML bodies are decoded on the serving thread: the worker thread did not start')
        finish({ kind: 'here' })
        for (const job of waiting.splice(0)) job.resolve({ kind: 'here' })
        return
      }
      logger.warn({ err: failure?.message }, 'the YAML decoder worker stopped; a new one takes the next body')
      finish({ kind: 'failed', reason: failure?.message ?? 'the decoder stopped' })
    })
    return started
  }

  const armDeadline = (job: Running): void => {
    clearTimeout(job.timer)
    job.timer = setTimeout(() => {
      stopWorker()
      finish({ kind: 'timeout' })
    }, timeoutMs)
    job.timer.unref?.()
  }

  const stopWorker = (): void => {
    const stopping = worker
    worker = undefined
    if (stopping) void stopping.terminate()
  }

  function pump(): void {
    if (running) return
    const job = waiting.shift()
    if (!job) return
    if (closed || unavailable) return job.resolve({ kind: 'here' })
    worker ??= start()
    if (!worker) return job.resolve({ kind: 'here' })
    running = { id: nextId++, resolve: job.resolve, timer: undefined }
    armDeadline(running)
    worker.ref()
    worker.postMessage({ id: running.id, text: job.text, findDuplicates: job.findDuplicates } satisfies YamlJob)
  }

  return {
    offThreadFrom: options.offThreadFrom ?? 16 * 1024,
    get pending() {
      return waiting.length + (running ? 1 : 0)
    },
    decodeToJson(text, findDuplicates) {
      if (closed || unavailable) return Promise.resolve({ kind: 'here' })
      if (running && waiting.length >= maxQueued) return Promise.resolve({ kind: 'busy' })
      return new Promise((resolve) => {
        waiting.push({ text, findDuplicates, resolve })
        pump()
      })
    },
    async close() {
      closed = true
      const stopping = worker
      worker = undefined
      finish({ kind: 'here' })
      for (const job of waiting.splice(0)) job.resolve({ kind: 'here' })
      await stopping?.terminate()
    },
  }
}
