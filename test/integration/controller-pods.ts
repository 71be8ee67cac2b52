/**
 * What a kubelet would do for the workload-controller tests: pods here have
 * no node, so a test marks them Running and Ready by writing their status,
 * as a kubelet reports it.
 */
import type { ApiServer } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { pods } from '../../core/resources/core/pods.js'

const isReady = (pod: KubeObject): boolean =>
  ((pod['status'] as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')

/** Marks one pod Running and Ready (its Ready condition's transition time is now). */
export async function markReady(server: ApiServer, pod: KubeObject): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const status = {
    phase: 'Running',
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
      { type: 'Initialized', status: 'True', lastTransitionTime: now },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
      { type: 'Ready', status: 'True', lastTransitionTime: now },
    ],
    startTime: now,
  }
  await server.client.updateStatus(pods, pod.metadata.namespace ?? '', { ...pod, status }).catch((err: { code?: number }) => {
    if (err.code !== 409 && err.code !== 404) throw err
  })
}

/** Keeps marking every pod of the namespace Ready as it appears, until stopped: a kubelet that starts everything at once. */
export function readinessWriter(server: ApiServer, namespace: string): { stop(): void } {
  let stopped = false
  void (async () => {
    while (!stopped) {
      const list = await server.client.list(pods, namespace)
      for (const pod of list.items) if (!isReady(pod) && !pod.metadata.deletionTimestamp) await markReady(server, pod)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  return {
    stop: () => {
      stopped = true
    },
  }
}

export async function podsOf(server: ApiServer, namespace: string, selector?: string): Promise<KubeObject[]> {
  return (await server.client.list(pods, namespace, selector ? { labelSelector: selector } : {})).items.filter((p) => !p.metadata.deletionTimestamp)
}

/** The events recorded about one object, oldest first. */
export async function eventsAbout(server: ApiServer, namespace: string, name: string): Promise<Array<{ reason: string; message: string; type: string; source?: { component?: string } }>> {
  const { events } = await import('../../core/resources/core/events.js')
  const list = await server.client.list(events, namespace, { fieldSelector: `involvedObject.name=${name}` })
  return list.items.map((e) => e as unknown as { reason: string; message: string; type: string }).sort((a: any, b: any) => String(a.firstTimestamp).localeCompare(String(b.firstTimestamp)))
}
