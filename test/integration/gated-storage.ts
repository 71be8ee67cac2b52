/**
 * A memory store whose reads and writes of keys containing `slow` wait
 * until the test opens the gate: how a test holds requests in flight (a
 * slow backend) without timing anything.
 */
import { MemoryStorage } from '../../core/storage/memory.js'
import type { KubeObject } from '../../core/machinery/object.js'
import type { ReadOptions } from '../../core/storage/interface.js'

export class GatedStorage extends MemoryStorage {
  private waiting: Array<() => void> = []
  private arrivals: Array<() => void> = []
  /** Requests held at the gate right now. */
  held = 0
  /** Off while a test sets up its objects. */
  gating = true

  private async gate(key: string): Promise<void> {
    if (!this.gating || !key.includes('slow')) return
    this.held += 1
    for (const wake of this.arrivals.splice(0)) wake()
    await new Promise<void>((resolve) => this.waiting.push(resolve))
    this.held -= 1
  }

  /** Resolves once `count` requests wait at the gate. */
  async whenHeld(count: number): Promise<void> {
    while (this.held < count) await new Promise<void>((resolve) => this.arrivals.push(resolve))
  }

  /** Lets every held request go on. */
  open(): void {
    for (const go of this.waiting.splice(0)) go()
  }

  override async get(key: string, opts?: ReadOptions): Promise<KubeObject | undefined> {
    await this.gate(key)
    return super.get(key, opts)
  }

  override async create(key: string, obj: KubeObject): Promise<KubeObject> {
    await this.gate(key)
    return super.create(key, obj)
  }
}
