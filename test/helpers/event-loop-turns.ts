/**
 * Counts the turns of the event loop (one setImmediate callback each) from
 * now until `stop()`: the chances other requests had to run while some
 * work went on. Tests read how work shares the thread by these turns, never
 * by a clock.
 */
export interface TurnCounter {
  /** Turns counted so far. */
  readonly turns: number
  /** Stops counting; gives the turns counted. */
  stop(): number
}

export function countTurns(): TurnCounter {
  let turns = 0
  let counting = true
  const tick = (): void => {
    if (!counting) return
    turns++
    setImmediate(tick)
  }
  setImmediate(tick)
  return {
    get turns() {
      return turns
    },
    stop() {
      counting = false
      return turns
    },
  }
}
