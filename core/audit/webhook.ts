/**
 * Upstream's audit webhook backend (`--audit-webhook-config-file`): events
 * leave as one `audit.k8s.io/v1` EventList per call, POSTed to the
 * receiver the kubeconfig names. A failed call is tried again whatever the
 * error (upstream retries every failure: a lost event is worse than a late
 * one), up to five attempts, waiting `--audit-webhook-initial-backoff`
 * first and half as long again each time, with a fifth of jitter.
 */
import { TimeSlice } from '../machinery/time-slice.js'
import { AUDIT_API_VERSION, type AuditBackend, type AuditEvent } from './types.js'

/**
 * The port the runtime fills: one POST of the serialized EventList (UTF-8), which
 * resolves on a 2xx answer (its body is not read) and rejects with the
 * reason otherwise (unreachable, untrusted certificate, time-out, status).
 */
export interface AuditWebhookSender {
  send(body: Uint8Array): Promise<void>
  /** Drops kept connections at shutdown. */
  close?(): void
}

export interface AuditWebhookOptions {
  /** `--audit-webhook-initial-backoff`. */
  initialBackoffMs: number
  /** blocking-strict: a RequestReceived event the receiver did not take fails its request. */
  strict: boolean
  /** @default setTimeout; tests and embedders may wait otherwise */
  sleep?: (ms: number) => Promise<void>
  /** @default Math.random */
  random?: () => number
}

/** upstream's DefaultRetryBackoffWithInitialDelay: five attempts, the wait growing by half, a fifth of jitter. */
export const WEBHOOK_ATTEMPTS = 5
const BACKOFF_FACTOR = 1.5
const BACKOFF_JITTER = 0.2

/** The EventList one call carries. */
export function eventList(events: readonly AuditEvent[]): string {
  return JSON.stringify({ kind: 'EventList', apiVersion: AUDIT_API_VERSION, metadata: {}, items: events })
}

const encoder = new TextEncoder()

/**
 * The same EventList as UTF-8, written an event at a time and joined an
 * event at a time, letting other requests run between slices: a batch of
 * hundreds of events with large objects, serialized in one go, held the
 * thread for seconds (upstream serializes it on a goroutine of its own).
 */
export async function eventListBytes(events: readonly AuditEvent[], slice = new TimeSlice()): Promise<Uint8Array> {
  const parts = [encoder.encode(`{"kind":"EventList","apiVersion":${JSON.stringify(AUDIT_API_VERSION)},"metadata":{},"items":[`)]
  for (const [i, ev] of events.entries()) {
    await slice.pause()
    parts.push(encoder.encode(`${i > 0 ? ',' : ''}${JSON.stringify(ev)}`))
  }
  parts.push(encoder.encode(']}'))
  const out = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0))
  let offset = 0
  for (const part of parts) {
    await slice.pause()
    out.set(part, offset)
    offset += part.byteLength
  }
  return out
}

const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    // A retry waiting out its backoff must not keep a runtime alive that is otherwise done.
    ;(timer as { unref?: () => void }).unref?.()
  })

export class AuditWebhookBackend implements AuditBackend {
  readonly name = 'webhook'
  readonly failRequestOnError: boolean
  private readonly sleep: (ms: number) => Promise<void>
  private readonly random: () => number

  constructor(
    private readonly sender: AuditWebhookSender,
    private readonly options: AuditWebhookOptions,
  ) {
    this.failRequestOnError = options.strict
    this.sleep = options.sleep ?? defaultSleep
    this.random = options.random ?? Math.random
  }

  /** Resolves once the receiver took the list; rejects with the last failure after the last attempt. */
  async processEvents(events: readonly AuditEvent[]): Promise<void> {
    if (!events.length) return
    const body = await eventListBytes(events)
    let wait = this.options.initialBackoffMs
    for (let attempt = 1; ; attempt++) {
      try {
        await this.sender.send(body)
        return
      } catch (err) {
        if (attempt >= WEBHOOK_ATTEMPTS) throw err
      }
      await this.sleep(wait * (1 + BACKOFF_JITTER * this.random()))
      wait *= BACKOFF_FACTOR
    }
  }

  async shutdown(): Promise<void> {
    this.sender.close?.()
  }
}
