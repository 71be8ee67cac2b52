/**
 * The worker thread of `nodeYamlDecoder`: decodes one YAML body at a time
 * and answers its JSON text (or the decoder's refusal). Its own heap takes
 * the yaml package's garbage. Bundled as an entry point of its own.
 */
import { readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
import { parentPort } from 'node:worker_threads'
import { yamlToJsonAnswer } from '../../core/http/yaml-off-thread.js'

export interface YamlJob {
  id: number
  text: string
  findDuplicates: boolean
}

/** What the worker posts once its modules have loaded, before it reads any body. */
export const WORKER_READY = 'ready'

/**
 * The scheduling priority this thread lowers itself to (a nice value): when
 * the cores are busy, the serving thread's requests go first and a large
 * YAML body waits. Linux sets a priority per thread, by its id.
 */
export const WORKER_NICE = 10

/** This thread's id on Linux (`/proc/thread-self` names it); undefined elsewhere. */
function linuxThreadId(): number | undefined {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isInteger(id) && id > 0 ? id : undefined
  } catch {
    return undefined
  }
}

function lowerOwnPriority(): void {
  const id = linuxThreadId()
  if (id === undefined) return
  try {
    setPriority(id, Math.max(WORKER_NICE, getPriority(id)))
  } catch {
    // Not permitted (a sandbox without setpriority): the worker runs at the serving thread's priority.
  }
}

const port = parentPort
if (port) {
  lowerOwnPriority()
  port.on('message', (job: YamlJob) => {
    void yamlToJsonAnswer(job.text, job.findDuplicates).then((answer) => port.postMessage({ id: job.id, answer }))
  })
  port.postMessage(WORKER_READY)
}
