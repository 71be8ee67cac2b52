import { runUnitShare } from './unit-share.js'

await runUnitShare(1, 2)
