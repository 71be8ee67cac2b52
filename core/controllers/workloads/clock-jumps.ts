/**
 * Notices the controllers' clock jumping forward: a controller that waits
 * for a moment of `now()` (a CronJob's next run, a TTL, a node's
 * quarantine) sets a runtime timer for it, which a clock moved by hand
 * (tests, `manualClock`) or stepped by the host never fires. Checking
 * twice a second how far `now()` moved against the runtime's own clock
 * tells the controller to look again at once. The timer is unref'd.
 */
const CHECK_EVERY_MS = 500
/** Moves smaller than this are timer lateness, not a jump. */
const JUMP_MS = 250

export function onClockJump(now: () => Date, jumped: () => void): () => void {
  let lastClock = now().getTime()
  let lastReal = Date.now()
  const timer = setInterval(() => {
    const clock = now().getTime()
    const real = Date.now()
    if (clock - lastClock - (real - lastReal) > JUMP_MS) jumped()
    lastClock = clock
    lastReal = real
  }, CHECK_EVERY_MS)
  ;(timer as { unref?: () => void }).unref?.()
  return () => clearInterval(timer)
}
