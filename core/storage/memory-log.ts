/**
 * The memory store's event log: a FIFO with O(1) shift that compacts its
 * backing array now and then, searched by revision.
 */
/** A FIFO with O(1) shift that compacts its backing array now and then. */
export class Queue<T extends { revision: number }> {
  private items: T[] = []
  private head = 0

  get length(): number {
    return this.items.length - this.head
  }

  push(item: T): void {
    this.items.push(item)
  }

  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined
    const item = this.items[this.head++]
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }

  /** The item `i` places after the head. */
  at(i: number): T | undefined {
    return i >= 0 && i < this.length ? this.items[this.head + i] : undefined
  }

  clear(): void {
    this.items = []
    this.head = 0
  }

  /** For a queue of events in revision order: the index of the first with rev > `rev`. */
  firstIndexAfter(rev: number): number {
    let lo = 0
    let hi = this.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.at(mid)!.revision <= rev) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}
