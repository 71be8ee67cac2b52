import { runShare } from './share.js'

runShare(['e2e'], 3, 4)
