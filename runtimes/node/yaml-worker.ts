/**
 * The worker thread of `nodeYamlDecoder`: decodes one YAML body at a time
 * and answers its JSON text (or the decoder's refusal). Its own heap takes
 * the yaml package's garbage. Bundled as an entry point of its own.
 */
import { parentPort } from 'node:worker_threads'
import { yamlToJsonAnswer } from '../../core/http/yaml-off-thread.js'
import { lowerThisThread } from './daemon/background-threads.js'

export interface YamlJob {
  id: number
  text: string
  findDuplicates: boolean
}

/** What the worker posts once its modules have loaded, before it reads any body. */
export const WORKER_READY = 'ready'

const port = parentPort
if (port) {
  // Started after the daemon lowered its background threads: the worker lowers itself (background-threads.ts).
  void lowerThisThread()
  port.on('message', (job: YamlJob) => {
    void yamlToJsonAnswer(job.text, job.findDuplicates).then((answer) => port.postMessage({ id: job.id, answer }))
  })
  port.postMessage(WORKER_READY)
}
