/**
 * Upstream's truncating audit backend (`--audit-<backend>-truncate-*`): an
 * event larger than the limit loses its request and response objects and is
 * marked `audit.k8s.io/truncated`; one still too large is dropped; batches
 * are split so that none exceeds the batch limit.
 */
import type { DroppedEvents } from './batch.js'
import type { AuditBackend, AuditEvent } from './types.js'

export interface TruncateOptions {
  maxEventSize: number
  maxBatchSize: number
}

export const TRUNCATED_ANNOTATION = 'audit.k8s.io/truncated'

/**
 * Each event's serialized size, measured once: a backend that truncates
 * events as they are recorded and one that splits the batches a buffer sends
 * later read the same event, and serializing a batch of large events again
 * in one go would hold the thread.
 */
const sizes = new WeakMap<AuditEvent, number>()

function sizeOf(ev: AuditEvent): number {
  let size = sizes.get(ev)
  if (size === undefined) {
    size = new TextEncoder().encode(JSON.stringify(ev)).length
    sizes.set(ev, size)
  }
  return size
}

function truncated(ev: AuditEvent): AuditEvent {
  const { requestObject: _request, responseObject: _response, ...rest } = ev
  return { ...rest, annotations: { ...ev.annotations, [TRUNCATED_ANNOTATION]: 'true' } }
}

export class TruncatingBackend implements AuditBackend {
  readonly name: string

  constructor(
    private readonly delegate: AuditBackend,
    private readonly options: TruncateOptions,
    private readonly dropped: DroppedEvents,
  ) {
    this.name = delegate.name
  }

  get failRequestOnError(): boolean {
    return this.delegate.failRequestOnError ?? false
  }

  async processEvents(events: readonly AuditEvent[]): Promise<void> {
    let batch: AuditEvent[] = []
    let batchSize = 0
    const sends: Promise<void>[] = []
    for (const original of events) {
      let ev = original
      let size = sizeOf(ev)
      if (size > this.options.maxEventSize) {
        ev = truncated(ev)
        size = sizeOf(ev)
      }
      if (size > this.options.maxEventSize) {
        this.dropped('truncate', `event is too large even after truncation: ${size} bytes`, [original])
        continue
      }
      if (batch.length && batchSize + size > this.options.maxBatchSize) {
        sends.push(this.delegate.processEvents(batch))
        batch = []
        batchSize = 0
      }
      batch.push(ev)
      batchSize += size
    }
    if (batch.length) sends.push(this.delegate.processEvents(batch))
    await Promise.all(sends)
  }

  async shutdown(): Promise<void> {
    await this.delegate.shutdown?.()
  }
}
