/**
 * The Deployment controller in process, with the ReplicaSet controller and
 * a test that marks pods Ready as a kubelet would: a first rollout to full
 * availability, a rolling update from one image to the next, Recreate,
 * revision history, pausing, scaling, and everything collected when the
 * Deployment goes.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { ApiServer } from '../../core/index.js'
import type { KubeObject } from '../../core/machinery/object.js'
import { deployments, replicaSets } from '../../core/resources/groups/apps.js'
import { eventsAbout, podsOf, readinessWriter } from './controller-pods.js'
import { createTestServer, untilPasses } from './harness.js'

const servers: ApiServer[] = []
const writers: Array<{ stop(): void }> = []
after(async () => {
  for (const w of writers) w.stop()
  await Promise.all(servers.map((s) => s.shutdown()))
})

async function serverWith(options: Parameters<typeof createTestServer>[0] = {}): Promise<ApiServer> {
  const server = createTestServer({ controllers: ['deployment', 'replicaset'], ...options })
  servers.push(server)
  await server.ready
  writers.push(readinessWriter(server, 'default'))
  return server
}

function deployment(name: string, replicas: number, image: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image }] } },
      ...spec,
    },
  }
}

const status = (o: KubeObject): Record<string, any> => (o['status'] as Record<string, any>) ?? {}
const spec = (o: KubeObject): Record<string, any> => o['spec'] as Record<string, any>
const getDeployment = (server: ApiServer, name: string) => server.client.get(deployments, 'default', name)
const replicaSetsOf = async (server: ApiServer, app: string) =>
  (await server.client.list(replicaSets, 'default', { labelSelector: `app=${app}` })).items.sort((a, b) => Number(a.metadata.annotations?.['deployment.kubernetes.io/revision']) - Number(b.metadata.annotations?.['deployment.kubernetes.io/revision']))

/** kubectl rollout status's test of a finished rollout (polymorphichelpers/rollout_status.go). */
function rolledOut(d: KubeObject): boolean {
  const s = status(d)
  if ((d.metadata.generation ?? 0) > (s['observedGeneration'] ?? 0)) return false
  const progressing = (s['conditions'] ?? []).find((c: any) => c.type === 'Progressing')
  if (progressing?.reason === 'ProgressDeadlineExceeded') throw new Error(`deployment ${d.metadata.name} exceeded its progress deadline`)
  const updated = s['updatedReplicas'] ?? 0
  return updated >= spec(d)['replicas'] && (s['replicas'] ?? 0) <= updated && (s['availableReplicas'] ?? 0) >= updated
}

async function untilRolledOut(server: ApiServer, name: string): Promise<KubeObject> {
  let last: KubeObject | undefined
  await untilPasses(async () => {
    last = await getDeployment(server, name)
    assert.ok(rolledOut(last), `rolled out: ${JSON.stringify(status(last))}`)
  })
  return last!
}

async function changeSpec(server: ApiServer, name: string, change: (s: Record<string, any>) => void): Promise<void> {
  await untilPasses(async () => {
    const d = await getDeployment(server, name)
    change(spec(d))
    await server.client.update(deployments, 'default', d)
  })
}

const setImage = (image: string) => (s: Record<string, any>) => {
  s['template'].spec.containers[0].image = image
}

describe('Deployment controller', () => {
  it('rolls out a first ReplicaSet named by the template hash and reports it complete', async () => {
    const server = await serverWith()
    const created = await server.client.create(deployments, 'default', deployment('web', 3, 'nginx:1.25'))
    const d = await untilRolledOut(server, 'web')

    const [rs, ...others] = await replicaSetsOf(server, 'web')
    assert.equal(others.length, 0)
    const hash = rs!.metadata.labels?.['pod-template-hash']
    assert.match(hash!, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/)
    assert.equal(rs!.metadata.name, `web-${hash}`)
    assert.deepEqual(spec(rs!)['selector'], { matchLabels: { app: 'web', 'pod-template-hash': hash } })
    assert.deepEqual(rs!.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }])
    assert.equal(rs!.metadata.annotations?.['deployment.kubernetes.io/revision'], '1')
    assert.equal(rs!.metadata.annotations?.['deployment.kubernetes.io/desired-replicas'], '3')
    assert.equal(rs!.metadata.annotations?.['deployment.kubernetes.io/max-replicas'], '4')
    assert.equal(d.metadata.annotations?.['deployment.kubernetes.io/revision'], '1')

    const pods = await podsOf(server, 'default', 'app=web')
    assert.equal(pods.length, 3)
    for (const pod of pods) assert.equal(pod.metadata.labels?.['pod-template-hash'], hash)

    await untilPasses(async () => {
      const s = status(await getDeployment(server, 'web'))
      assert.equal(s['observedGeneration'], 1)
      assert.equal(s['replicas'], 3)
      assert.equal(s['updatedReplicas'], 3)
      assert.equal(s['readyReplicas'], 3)
      assert.equal(s['availableReplicas'], 3)
      assert.equal(s['unavailableReplicas'], undefined)
      const byType = Object.fromEntries(s['conditions'].map((c: any) => [c.type, c]))
      assert.deepEqual([byType.Available.status, byType.Available.reason, byType.Available.message], ['True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'])
      assert.deepEqual([byType.Progressing.status, byType.Progressing.reason, byType.Progressing.message], ['True', 'NewReplicaSetAvailable', `ReplicaSet "web-${hash}" has successfully progressed.`])
    })
    const scaling = (await eventsAbout(server, 'default', 'web')).filter((e) => e.reason === 'ScalingReplicaSet')
    assert.deepEqual(scaling[0]?.message, `Scaled up replica set web-${hash} from 0 to 3`)
    assert.equal(scaling[0]?.source?.component, 'deployment-controller')
  })

  it('rolls from image A to B: one ReplicaSet at full size, the old at zero, revision 2', async () => {
    const server = await serverWith()
    await server.client.create(deployments, 'default', deployment('roll', 4, 'nginx:1.25'))
    await untilRolledOut(server, 'roll')
    await changeSpec(server, 'roll', setImage('nginx:1.26'))
    const d = await untilRolledOut(server, 'roll')
    assert.equal(d.metadata.annotations?.['deployment.kubernetes.io/revision'], '2')

    const [old, current] = await replicaSetsOf(server, 'roll')
    assert.equal(spec(old!)['replicas'], 0)
    assert.equal(spec(current!)['replicas'], 4)
    assert.equal(current!.metadata.annotations?.['deployment.kubernetes.io/revision'], '2')
    assert.equal(spec(current!)['template'].spec.containers[0].image, 'nginx:1.26')
    await untilPasses(async () => {
      const pods = await podsOf(server, 'default', 'app=roll')
      assert.equal(pods.length, 4)
      for (const pod of pods) assert.equal(spec(pod)['containers'][0].image, 'nginx:1.26')
    })
    const messages = (await eventsAbout(server, 'default', 'roll')).filter((e) => e.reason === 'ScalingReplicaSet').map((e) => e.message)
    // How many steps the rollout takes depends on when pods turn ready; the last one takes the old ReplicaSet to zero.
    assert.ok(
      messages.some((m) => new RegExp(`^Scaled down replica set ${old!.metadata.name} from [1-4] to 0$`).test(m)),
      messages.join('\n'),
    )
    assert.ok(messages.every((m) => /^Scaled (up|down) replica set roll-\w+ from \d+ to \d+$/.test(m)), messages.join('\n'))

    // Rolling back (what `kubectl rollout undo` writes) reuses the first ReplicaSet as revision 3.
    await changeSpec(server, 'roll', setImage('nginx:1.25'))
    await untilRolledOut(server, 'roll')
    const reused = (await replicaSetsOf(server, 'roll')).find((rs) => rs.metadata.name === old!.metadata.name)!
    assert.equal(reused.metadata.annotations?.['deployment.kubernetes.io/revision'], '3')
    assert.equal(reused.metadata.annotations?.['deployment.kubernetes.io/revision-history'], '1')
    assert.equal(spec(reused)['replicas'], 4)
  })

  it('keeps revisionHistoryLimit old ReplicaSets and collects everything when the Deployment goes', async () => {
    const server = await serverWith()
    await server.client.create(deployments, 'default', deployment('hist', 2, 'nginx:1', { revisionHistoryLimit: 1 }))
    await untilRolledOut(server, 'hist')
    for (const image of ['nginx:2', 'nginx:3']) {
      await changeSpec(server, 'hist', setImage(image))
      await untilRolledOut(server, 'hist')
    }
    await untilPasses(async () => {
      const sets = await replicaSetsOf(server, 'hist')
      assert.deepEqual(
        sets.map((rs) => [rs.metadata.annotations?.['deployment.kubernetes.io/revision'], spec(rs)['replicas']]),
        [
          ['2', 0],
          ['3', 2],
        ],
      )
    })

    await server.client.delete(deployments, 'default', 'hist')
    await untilPasses(async () => {
      assert.equal((await replicaSetsOf(server, 'hist')).length, 0)
      assert.equal((await podsOf(server, 'default', 'app=hist')).length, 0)
    })
  })

  it('recreates: the old pods go before the new ReplicaSet grows', async () => {
    const server = await serverWith()
    await server.client.create(deployments, 'default', deployment('rec', 2, 'nginx:1', { strategy: { type: 'Recreate' } }))
    await untilRolledOut(server, 'rec')
    await changeSpec(server, 'rec', setImage('nginx:2'))
    await untilRolledOut(server, 'rec')
    const [old, current] = await replicaSetsOf(server, 'rec')
    assert.deepEqual([spec(old!)['replicas'], spec(current!)['replicas']], [0, 2])
    const messages = (await eventsAbout(server, 'default', 'rec')).filter((e) => e.reason === 'ScalingReplicaSet').map((e) => e.message)
    assert.deepEqual(messages.slice(1), [`Scaled down replica set ${old!.metadata.name} from 2 to 0`, `Scaled up replica set ${current!.metadata.name} from 0 to 2`])
  })

  it('scales while paused without rolling out, and rolls out once resumed', async () => {
    const server = await serverWith()
    await server.client.create(deployments, 'default', deployment('paused', 1, 'nginx:1'))
    await untilRolledOut(server, 'paused')
    await changeSpec(server, 'paused', (s) => {
      s['paused'] = true
      s['replicas'] = 3
      setImage('nginx:2')(s)
    })
    await untilPasses(async () => {
      const d = await getDeployment(server, 'paused')
      const progressing = status(d)['conditions'].find((c: any) => c.type === 'Progressing')
      assert.deepEqual([progressing.status, progressing.reason, progressing.message], ['Unknown', 'DeploymentPaused', 'Deployment is paused'])
      const sets = await replicaSetsOf(server, 'paused')
      assert.equal(sets.length, 1, 'no new ReplicaSet while paused')
      assert.equal(spec(sets[0]!)['replicas'], 3)
    })
    await changeSpec(server, 'paused', (s) => {
      s['paused'] = false
    })
    await untilRolledOut(server, 'paused')
    const sets = await replicaSetsOf(server, 'paused')
    assert.deepEqual(
      sets.map((rs) => spec(rs)['replicas']),
      [0, 3],
    )
  })

  it('reports a rollout whose pods never become ready as past its progress deadline', async () => {
    const server = await serverWith()
    const { namespaces } = await import('../../core/resources/core/namespaces.js')
    await server.client.create(namespaces, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'stuck' } })
    await server.client.create(deployments, 'stuck', deployment('slow', 1, 'nginx:1', { progressDeadlineSeconds: 1 }))
    await untilPasses(async () => {
      const d = await server.client.get(deployments, 'stuck', 'slow')
      const byType = Object.fromEntries((status(d)['conditions'] ?? []).map((c: any) => [c.type, c]))
      const [rs] = (await server.client.list(replicaSets, 'stuck')).items
      assert.deepEqual([byType.Available?.status, byType.Available?.reason, byType.Available?.message], ['False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'])
      assert.deepEqual(
        [byType.Progressing?.status, byType.Progressing?.reason, byType.Progressing?.message],
        ['False', 'ProgressDeadlineExceeded', `ReplicaSet "${rs!.metadata.name}" has timed out progressing.`],
      )
      assert.equal(status(d)['unavailableReplicas'], 1)
    }, 10_000)
  })

  it('rolls out under RBAC as the deployment-controller and replicaset-controller service accounts', async () => {
    const server = await serverWith({ authorizationModes: ['RBAC'] })
    await server.client.create(deployments, 'default', deployment('rbac', 2, 'nginx:1'))
    await untilRolledOut(server, 'rbac')
    await changeSpec(server, 'rbac', setImage('nginx:2'))
    const d = await untilRolledOut(server, 'rbac')
    assert.equal(d.metadata.annotations?.['deployment.kubernetes.io/revision'], '2')
  })
})
