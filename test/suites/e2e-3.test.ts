import { runShare } from './share.js'

runShare(['e2e'], 2, 4)
