import { runShare } from './share.js'

runShare(['e2e'], 1, 4)
