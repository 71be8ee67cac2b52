/**
 * The store's current revision for consistent reads from the watch cache,
 * read once for every read that arrives meanwhile, as etcd batches its own
 * ReadIndex: a read may only use an answer to a question asked after it
 * arrived (a write acknowledged before the read started is then counted), so
 * reads arriving while a question is out share the next one, asked as soon
 * as that question is answered. At most one question is out at a time.
 */
export class SharedRevision {
  /** The question out now: reads that arrived before it was asked share it. */
  private asked: Promise<number> | undefined
  /** The next question, asked once `asked` settles: reads arriving now share it. */
  private next: Promise<number> | undefined

  constructor(private readonly read: () => Promise<number>) {}

  /** A revision at least the store's revision at the moment of the call. */
  current(): Promise<number> {
    if (this.next) return this.next
    if (!this.asked) return this.ask()
    const after = this.asked
    this.next = after.then(
      () => this.askNext(),
      () => this.askNext(),
    )
    return this.next
  }

  private askNext(): Promise<number> {
    this.next = undefined
    return this.ask()
  }

  private ask(): Promise<number> {
    const question = this.read()
    this.asked = question
    const done = () => {
      if (this.asked === question) this.asked = undefined
    }
    question.then(done, done)
    return question
  }
}
