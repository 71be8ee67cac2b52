import { runShare } from './share.js'

runShare(['integration', 'storage-contract', 'fuzz'], 3, 6)
