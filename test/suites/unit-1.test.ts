import { runUnitShare } from './unit-share.js'

await runUnitShare(0, 2)
