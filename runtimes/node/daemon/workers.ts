/**
 * `--workers N`: N serving processes behind the one secure port, with
 * node:cluster. The primary opens the listening socket and shares it with
 * the workers, which accept from it (Node 20 cannot bind SO_REUSEPORT); every
 * worker is a whole server of its own on the shared etcd, as several
 * daemons are (docs/operations.md, "Several servers"), or on the one file of
 * the embedded store, which every worker opens; there the primary passes each
 * worker's word that it committed on to the others, so that their watches
 * hear of the commit at once.
 *
 * This module is both sides of that arrangement: `superviseWorkers` runs in
 * the primary (fork, restart with a back-off, pass shutdown on), and
 * `servingWorker` tells a worker which one it is and carries its messages.
 */
import type { Worker } from 'node:cluster'
import type { Logger } from '../../../core/logging/logger.js'

/** The worker's slot, 1 to N, given to it by the primary; unset in a daemon that is not a worker. */
const WORKER_ENV = 'APISERVER_WORKER'
/** The first restart of a crashed worker waits this long; each quick crash after it doubles the wait. */
const RESTART_BACKOFF_MS = 500
const RESTART_BACKOFF_MAX_MS = 30_000
/** A worker that served this long before dying is restarted after the shortest wait again. */
const STABLE_AFTER_MS = 30_000

type PrimaryMessage = { kind: 'shutdown'; signal: string } | { kind: 'store-changed' } | { kind: 'audit-log-rotated'; rotation: number }
type WorkerMessage =
  | { kind: 'listening'; url: string; port: number }
  | { kind: 'store-changed' }
  | { kind: 'rotate-audit-log'; inode: number }
  | { kind: 'audit-log-reopened'; rotation: number }

export interface ServingWorker {
  /** 1 to N. */
  index: number
  /** Part of the server's id, so that each worker is a server of its own. */
  instance: string
  /** Aborted when the primary asks this worker to shut down (it got SIGTERM or SIGINT). */
  shutdownRequested: AbortSignal
  reportListening(url: string, port: number): void
  /** Tells the other workers that this one committed to the shared embedded store (several commits of one turn: one message). */
  storeChanged(): void
  /** `listener` hears of the other workers' commits to the shared embedded store. */
  onStoreChanged(listener: () => void): void
  /** Asks the primary to rotate the audit log file every worker appends to (the file's inode names it). */
  rotateAuditLog(inode: number): void
  /** `reopen` runs once the primary renamed the audit log file; the primary hears when it has run. */
  onAuditLogRotated(reopen: () => void): void
}

let current: ServingWorker | undefined

/** This process's part as a worker of `--workers`, or undefined when it is a daemon of its own. */
export function servingWorker(): ServingWorker | undefined {
  if (current) return current
  const index = Number(process.env[WORKER_ENV])
  const send = process.send?.bind(process)
  if (!Number.isInteger(index) || index < 1 || !send) return undefined
  const shutdown = new AbortController()
  const storeListeners: (() => void)[] = []
  const auditLogListeners: (() => void)[] = []
  // Listened for from the first moment: a request that arrives during start-up is not lost.
  process.on('message', (message: PrimaryMessage) => {
    if (message?.kind === 'shutdown' && !shutdown.signal.aborted) shutdown.abort(message.signal)
    if (message?.kind === 'store-changed') for (const listener of storeListeners) listener()
    if (message?.kind === 'audit-log-rotated') {
      for (const reopen of auditLogListeners) reopen()
      send({ kind: 'audit-log-reopened', rotation: message.rotation } satisfies WorkerMessage, undefined, {}, () => {})
    }
  })
  let changePending = false
  current = {
    index,
    instance: `worker-${index}`,
    shutdownRequested: shutdown.signal,
    reportListening: (url, port) => void send({ kind: 'listening', url, port } satisfies WorkerMessage),
    storeChanged() {
      if (changePending) return
      changePending = true
      setImmediate(() => {
        changePending = false
        // The primary gone, the others learn of the commit by looking at the file.
        if (process.connected) send({ kind: 'store-changed' } satisfies WorkerMessage, undefined, {}, () => {})
      })
    },
    onStoreChanged: (listener) => void storeListeners.push(listener),
    rotateAuditLog(inode) {
      if (process.connected) send({ kind: 'rotate-audit-log', inode } satisfies WorkerMessage, undefined, {}, () => {})
    },
    onAuditLogRotated: (reopen) => void auditLogListeners.push(reopen),
  }
  return current
}

export interface SupervisorOptions {
  count: number
  logger: Logger
  /** How long workers may take to shut down once asked before they are killed. */
  shutdownDeadlineMs: number
  /** Called once, when the first worker listens (the port is known only then with --secure-port=0). */
  onFirstListening(url: string, port: number): Promise<void>
  /**
   * A worker asks for the shared audit log (the file of that inode) to be
   * rotated; `reopenAll` tells every worker to reopen it once renamed, and
   * resolves when each has (or has exited).
   */
  onRotateAuditLog?(inode: number, reopenAll: () => Promise<void>): void
}

interface Slot {
  index: number
  worker?: Worker
  startedAt: number
  /** Some worker of this slot has listened: its later deaths are restarted, not start-up failures. */
  served: boolean
  /** The running worker listens, so it has its signal handlers: a shutdown goes to it as a message. */
  listening: boolean
  quickCrashes: number
  restartTimer?: ReturnType<typeof setTimeout>
}

/**
 * Forks `count` workers and keeps them running until SIGTERM or SIGINT,
 * which each worker gets to run its shutdown phases; resolves with the exit
 * code. A worker that fails before any of its slot ever listened is a
 * start-up failure: the others are stopped and its code returned, as one
 * process's start-up error would be.
 */
export async function superviseWorkers(opts: SupervisorOptions): Promise<number> {
  const { default: cluster } = await import('node:cluster')
  // Every worker accepts from the one listening socket the primary opened. Node's default on Linux, the
  // primary accepting and passing each connection on, leaves a connection passed to a worker that dies
  // before taking it open in the primary, unanswered, for good; this way a dying worker takes only the
  // connections it accepted with it, and they fail at once, as a dead server's behind a load balancer do.
  cluster.schedulingPolicy = cluster.SCHED_NONE
  const { logger } = opts
  const slots: Slot[] = Array.from({ length: opts.count }, (_, i) => ({ index: i + 1, startedAt: 0, served: false, listening: false, quickCrashes: 0 }))
  let stopping = false
  let firstListening = false
  /** The code to exit with once every worker is gone: 0 for a shutdown, else the code of the worker that failed to start. */
  let exitCode = 0
  let deadline: ReturnType<typeof setTimeout> | undefined
  let finish: (code: number) => void = () => {}
  const finished = new Promise<number>((resolve) => (finish = resolve))

  const live = (): Worker[] => slots.flatMap((s) => (s.worker ? [s.worker] : []))
  const allExited = (): boolean => live().length === 0 && slots.every((s) => s.restartTimer === undefined)

  /** The reopens of the audit log each worker owes, by rotation; a worker that exits owes none. */
  let rotations = 0
  const owedReopens = new Map<Worker, { rotation: number; done: () => void }[]>()
  const reopened = (worker: Worker, upTo = Number.POSITIVE_INFINITY): void => {
    const owed = owedReopens.get(worker) ?? []
    for (const entry of owed.filter((e) => e.rotation <= upTo)) entry.done()
    const left = owed.filter((e) => e.rotation > upTo)
    if (left.length > 0) owedReopens.set(worker, left)
    else owedReopens.delete(worker)
  }
  const reopenAll = (): Promise<void> => {
    const rotation = ++rotations
    const waits = live()
      .filter((worker) => worker.isConnected())
      .map(
        (worker) =>
          new Promise<void>((done) => {
            owedReopens.set(worker, [...(owedReopens.get(worker) ?? []), { rotation, done }])
            worker.send({ kind: 'audit-log-rotated', rotation } satisfies PrimaryMessage, undefined, (err) => {
              if (err) reopened(worker, rotation)
            })
          }),
      )
    return Promise.all(waits).then(() => {})
  }

  const fork = (slot: Slot): void => {
    slot.restartTimer = undefined
    slot.startedAt = Date.now()
    const worker = cluster.fork({ [WORKER_ENV]: String(slot.index) })
    slot.worker = worker
    worker.on('message', (message: WorkerMessage) => {
      if (message?.kind === 'store-changed') {
        for (const other of live()) if (other !== worker && other.isConnected()) other.send({ kind: 'store-changed' } satisfies PrimaryMessage, undefined, () => {})
        return
      }
      if (message?.kind === 'rotate-audit-log') return opts.onRotateAuditLog?.(message.inode, reopenAll)
      if (message?.kind === 'audit-log-reopened') return reopened(worker, message.rotation)
      if (message?.kind !== 'listening') return
      slot.served = true
      slot.listening = true
      if (firstListening) return
      firstListening = true
      opts.onFirstListening(message.url, message.port).catch((err: unknown) => logger.warn({ err: String(err) }, 'cannot write the admin kubeconfig'))
    })
    worker.on('exit', (code, signal) => {
      slot.worker = undefined
      slot.listening = false
      // Its file closed with it: no rotation waits on it.
      reopened(worker)
      if (stopping) {
        if (allExited()) finish(exitCode)
        return
      }
      if (!slot.served) {
        // Failing before serving at all: the flags or the environment are at fault, and a restart would fail again.
        logger.error({ worker: slot.index, code, signal }, `worker ${slot.index} stopped before it served; stopping the others`)
        exitCode = code || 1
        stopAll('start-up failure')
        if (allExited()) finish(exitCode)
        return
      }
      const lived = Date.now() - slot.startedAt
      slot.quickCrashes = lived >= STABLE_AFTER_MS ? 0 : slot.quickCrashes + 1
      const delayMs = Math.min(RESTART_BACKOFF_MAX_MS, RESTART_BACKOFF_MS * 2 ** Math.max(0, slot.quickCrashes - 1))
      logger.warn({ worker: slot.index, pid: worker.process.pid, code, signal, restartInMs: delayMs }, `worker ${slot.index} exited; restarting it`)
      slot.restartTimer = setTimeout(() => fork(slot), delayMs)
    })
  }

  const stopAll = (reason: string): void => {
    stopping = true
    for (const slot of slots) {
      clearTimeout(slot.restartTimer)
      slot.restartTimer = undefined
    }
    for (const slot of slots) {
      // A worker still starting has no shutdown to run yet: SIGTERM ends it as it ends a single daemon's start-up.
      if (slot.listening && slot.worker?.isConnected()) slot.worker.send({ kind: 'shutdown', signal: reason } satisfies PrimaryMessage)
      else slot.worker?.process.kill('SIGTERM')
    }
    deadline = setTimeout(() => {
      logger.warn({ workers: live().length }, 'workers did not shut down in time; killing them')
      for (const worker of live()) worker.process.kill('SIGKILL')
      finish(exitCode)
    }, opts.shutdownDeadlineMs)
    deadline.unref()
  }

  const onSignal = (signal: NodeJS.Signals): void => {
    if (!stopping) {
      logger.info({ signal, workers: live().length }, 'shutting down every worker')
      stopAll(signal)
      if (allExited()) finish(exitCode)
      return
    }
    logger.warn({ signal }, 'second signal: killing the workers without finishing the shutdown')
    for (const worker of live()) worker.process.kill('SIGKILL')
    process.exit(1)
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, onSignal)

  for (const slot of slots) fork(slot)
  logger.info({ workers: opts.count }, `starting ${opts.count} serving worker processes`)
  const code = await finished
  clearTimeout(deadline)
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.off(signal, onSignal)
  return code
}
