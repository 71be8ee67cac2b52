/**
 * A controller author's loop in process: a server with the workload
 * controllers and 3 simulated nodes, then a 3-replica Deployment created
 * and waited on until `availableReplicas` is 3 (the figure: under
 * 200 ms of wall time). Fresh server per round; the package from dist/.
 *
 *   npm run build && node --import tsx test/bench/simulated-rollout.ts [--rounds N] [--no-write]
 *
 * Writes its section of docs/benchmarks.md. Figures only: nothing passes or fails.
 */
import { join } from 'node:path'
import { cpus, loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { createApiServer } from 'kube-apiserver-ts'
import { replaceSection } from './section.js'

const ROOT = join(import.meta.dirname, '..', '..')
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true }

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '9' }, 'no-write': { type: 'boolean', default: false } } })

const startMs: number[] = []
const rolloutMs: number[] = []
for (let round = 0; round < Number(values.rounds); round++) {
  const t0 = performance.now()
  const server = createApiServer({ nodes: 3, controllers: ['*'] })
  await server.ready
  const t1 = performance.now()
  await server.client.create(DEPLOYMENTS, 'default', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } },
  })
  for (;;) {
    const web = await server.client.get(DEPLOYMENTS, 'default', 'web')
    if ((web['status'] as { availableReplicas?: number } | undefined)?.availableReplicas === 3) break
    await new Promise((resolve) => setImmediate(resolve))
  }
  startMs.push(t1 - t0)
  rolloutMs.push(performance.now() - t1)
  await server.shutdown()
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const BEGIN = '<!-- simulated-rollout: begin -->'
const END = '<!-- simulated-rollout: end -->'
const section = [
  BEGIN,
  '## A Deployment on simulated nodes, in process',
  '',
  `\`createApiServer({ nodes: 3, controllers: ['*'] })\`, then a 3-replica Deployment created and read until`,
  '`availableReplicas` is 3 (the controllers make the ReplicaSet and pods, the simulated scheduler binds them,',
  `the simulated kubelet runs them). ${values.rounds} fresh servers in one process, ${cpus().length} cores, load average`,
  `${loadavg()[0]!.toFixed(1)} at the end. Medians (the first round pays for compiling the code).`,
  '',
  '| measurement | median | fastest | slowest |',
  '| --- | --- | --- | --- |',
  `| createApiServer() to ready | ${median(startMs).toFixed(0)} ms | ${Math.min(...startMs).toFixed(0)} ms | ${Math.max(...startMs).toFixed(0)} ms |`,
  `| Deployment created to 3 available (goal: under 200 ms) | ${median(rolloutMs).toFixed(0)} ms | ${Math.min(...rolloutMs).toFixed(0)} ms | ${Math.max(...rolloutMs).toFixed(0)} ms |`,
  END,
].join('\n')
console.log(section)
if (!values['no-write']) await replaceSection(ROOT, BEGIN, END, section)
