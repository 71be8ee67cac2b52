import { runShare } from './share.js'

runShare(['e2e'], 0, 4)
