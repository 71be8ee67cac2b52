import { runShare } from './share.js'

runShare(['integration', 'storage-contract', 'fuzz'], 2, 6)
