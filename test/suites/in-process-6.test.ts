import { runShare } from './share.js'

runShare(['integration', 'storage-contract', 'fuzz'], 5, 6)
