import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { eventually, type Reply, startServer, type TestClient } from './harness.js'

const NS = '/apis/apps/v1/namespaces/default'
const DEPLOYS = `${NS}/deployments`
const RSS = `${NS}/replicasets`
const STSS = `${NS}/statefulsets`
const DSS = `${NS}/daemonsets`
const RCS = '/api/v1/namespaces/default/replicationcontrollers'
const JOBS = '/apis/batch/v1/namespaces/default/jobs'
const CRONJOBS = '/apis/batch/v1/namespaces/default/cronjobs'

const MERGE = 'application/merge-patch+json'
const container = { name: 'app', image: 'nginx:1.27' }
const template = (labels: Record<string, string> = { app: 'web' }, spec: Record<string, unknown> = {}) => ({
  metadata: { labels },
  spec: { containers: [container], ...spec },
})
const selector = { matchLabels: { app: 'web' } }

function causes(res: Reply): string[] {
  assert.equal(res.status, 422, res.text)
  assert.equal(res.body.reason, 'Invalid')
  return res.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)
}

describe('workload controllers through the API', () => {
  let client: TestClient
  before(async () => {
    client = await startServer()
  })

  async function assertNotStored(path: string): Promise<void> {
    assert.equal((await client.get(path)).status, 404)
  }

  /** A delete without a policy orphans the pods of RCs and Jobs: the object goes once the collector has taken its orphan finalizer. */
  async function assertGone(path: string): Promise<void> {
    await eventually(`${path} deleted`, async () => (await client.get(path)).status === 404)
  }

  describe('Deployments', () => {
    it('stores a created deployment with upstream defaults and a fresh status', async () => {
      const created = await client.post(DEPLOYS, { metadata: { name: 'web' }, spec: { selector, template: template() } })
      assert.equal(created.status, 201, created.text)
      const read = await client.get(`${DEPLOYS}/web`)
      const spec = read.body.spec
      assert.equal(spec.replicas, 1)
      assert.deepEqual(spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } })
      assert.equal(spec.revisionHistoryLimit, 10)
      assert.equal(spec.progressDeadlineSeconds, 600)
      assert.equal(spec.template.spec.restartPolicy, 'Always')
      assert.equal(spec.template.spec.dnsPolicy, 'ClusterFirst')
      assert.equal(spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent')
      assert.deepEqual(read.body.status, {})
      assert.equal(read.body.metadata.generation, 1)
    })

    it('refuses a deployment without selector, with a wrong restart policy and bad rollout bounds, storing nothing', async () => {
      const res = await client.post(DEPLOYS, {
        metadata: { name: 'broken' },
        spec: {
          replicas: -1,
          template: template({ app: 'web' }, { restartPolicy: 'Never' }),
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } },
          minReadySeconds: 700,
        },
      })
      assert.deepEqual(causes(res), [
        'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        'spec.selector: Required value',
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
        'spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds',
      ])
      await assertNotStored(`${DEPLOYS}/broken`)
    })

    it('refuses an empty selector, a selector that misses the template, and Recreate with rollingUpdate', async () => {
      const empty = await client.post(DEPLOYS, { metadata: { name: 'empty' }, spec: { selector: {}, template: template() } })
      assert.deepEqual(causes(empty), [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
      ])
      const recreate = await client.post(DEPLOYS, {
        metadata: { name: 'recreate' },
        spec: { selector: { matchLabels: { app: 'other' } }, template: template(), strategy: { type: 'Recreate', rollingUpdate: {} } },
      })
      assert.deepEqual(causes(recreate), [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
      ])
      await assertNotStored(`${DEPLOYS}/empty`)
      await assertNotStored(`${DEPLOYS}/recreate`)
    })

    it('scales and changes the template, but keeps the selector immutable', async () => {
      const current = (await client.get(`${DEPLOYS}/web`)).body
      const scaled = await client.patch(`${DEPLOYS}/web`, { spec: { replicas: 3, template: { spec: { containers: [{ ...container, image: 'nginx:1.28' }] } } } }, MERGE)
      assert.equal(scaled.status, 200, scaled.text)
      assert.equal(scaled.body.spec.replicas, 3)
      assert.equal(scaled.body.metadata.generation, 2)
      const moved = await client.put(`${DEPLOYS}/web`, {
        ...current,
        metadata: { ...current.metadata, resourceVersion: undefined },
        spec: { ...current.spec, selector: { matchLabels: { app: 'web', tier: 'front' } }, template: template({ app: 'web', tier: 'front' }) },
      })
      assert.deepEqual(causes(moved), [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"front"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
      ])
      assert.deepEqual((await client.get(`${DEPLOYS}/web`)).body.spec.selector, selector)
    })

    it('leaves the status to the status endpoint', async () => {
      const res = await client.patch(`${DEPLOYS}/web`, { status: { replicas: 5 } }, MERGE)
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body.status, {})
    })

    it('deletes a deployment', async () => {
      assert.equal((await client.delete(`${DEPLOYS}/web`)).status, 200)
      await assertNotStored(`${DEPLOYS}/web`)
    })
  })

  describe('ReplicaSets', () => {
    it('defaults replicas and the template, and counts no replicas yet', async () => {
      const created = await client.post(RSS, { metadata: { name: 'rs' }, spec: { selector, template: template() } })
      assert.equal(created.status, 201, created.text)
      const read = (await client.get(`${RSS}/rs`)).body
      assert.equal(read.spec.replicas, 1)
      assert.equal(read.spec.template.spec.schedulerName, 'default-scheduler')
      assert.deepEqual(read.status, { replicas: 0 })
    })

    it('refuses bad selector expressions and a template deadline, storing nothing', async () => {
      const res = await client.post(RSS, {
        metadata: { name: 'bad-rs' },
        spec: {
          minReadySeconds: -5,
          selector: { matchExpressions: [{ key: 'app', operator: 'In' }, { key: 'tier', operator: 'Exists', values: ['x'] }] },
          template: template({ app: 'web' }, { activeDeadlineSeconds: 30 }),
        },
      })
      assert.deepEqual(causes(res), [
        'spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0',
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"In", Values:[]string(nil)}, v1.LabelSelectorRequirement{Key:"tier", Operator:"Exists", Values:[]string{"x"}}}}: invalid label selector',
      ])
      await assertNotStored(`${RSS}/bad-rs`)
    })

    it('refuses owner references and finalizers as upstream does, storing nothing', async () => {
      const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-1', controller: true }
      const res = await client.post(RSS, {
        metadata: {
          name: 'owned-rs',
          ownerReferences: [owner, { ...owner, name: 'other' }, { apiVersion: 'v1', kind: 'Event', name: '', uid: 'u-2' }],
          finalizers: ['orphan', 'foregroundDeletion'],
        },
        spec: { selector, template: template() },
      })
      const literal = (name: string, uid: string, controller: string) =>
        `v1.OwnerReference{APIVersion:"${name ? 'apps/v1' : 'v1'}", Kind:"${name ? 'Deployment' : 'Event'}", Name:"${name}", UID:"${uid}", Controller:${controller}, BlockOwnerDeletion:(*bool)(nil)}`
      const refs = `[]v1.OwnerReference{${literal('web', 'u-1', '(*bool)(&true)')}, ${literal('other', 'u-1', '(*bool)(&true)')}, ${literal('', 'u-2', '(*bool)(nil)')}}`
      assert.deepEqual(causes(res), [
        `metadata.ownerReferences: Invalid value: ${refs}: Only one reference can have Controller set to true. Found "true" in references for Deployment/web and Deployment/other`,
        'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
        `metadata.ownerReferences: Invalid value: ${literal('', 'u-2', '(*bool)(nil)')}: /v1, Kind=Event is disallowed from being an owner`,
        'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
      ])
      await assertNotStored(`${RSS}/owned-rs`)
    })

    it('scales through the scale subresource, refuses a new selector, and deletes', async () => {
      const scaled = await client.patch(`${RSS}/rs/scale`, { spec: { replicas: 2 } }, MERGE)
      assert.equal(scaled.status, 200, scaled.text)
      assert.equal((await client.get(`${RSS}/rs`)).body.spec.replicas, 2)
      const res = await client.patch(`${RSS}/rs`, { spec: { selector: { matchLabels: { app: 'web', v: '2' } }, template: { metadata: { labels: { app: 'web', v: '2' } } } } }, MERGE)
      assert.match(causes(res)[0] ?? '', /^spec\.selector: Invalid value: v1\.LabelSelector\{.*\}: field is immutable$/)
      assert.equal((await client.delete(`${RSS}/rs`)).status, 200)
      await assertNotStored(`${RSS}/rs`)
    })
  })

  describe('StatefulSets', () => {
    const sts = (name: string, spec: Record<string, unknown> = {}) => ({
      metadata: { name },
      spec: {
        serviceName: 'db',
        selector,
        template: template(),
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
        ...spec,
      },
    })

    it('stores a created statefulset with upstream defaults', async () => {
      const created = await client.post(STSS, sts('db'))
      assert.equal(created.status, 201, created.text)
      const read = (await client.get(`${STSS}/db`)).body
      assert.equal(read.spec.replicas, 1)
      assert.equal(read.spec.podManagementPolicy, 'OrderedReady')
      assert.deepEqual(read.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } })
      assert.deepEqual(read.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' })
      assert.equal(read.spec.revisionHistoryLimit, 10)
      assert.equal(read.spec.volumeClaimTemplates[0].spec.volumeMode, 'Filesystem')
      assert.deepEqual(read.spec.volumeClaimTemplates[0].status, { phase: 'Pending' })
      assert.deepEqual(read.status, { availableReplicas: 0, replicas: 0 })
    })

    it('refuses a bad policy, a partition below 0 and a name that is no DNS label, storing nothing', async () => {
      const res = await client.post(
        STSS,
        sts('db.v2', { podManagementPolicy: 'Random', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1 } } }),
      )
      const list = causes(res)
      assert.match(list[0] ?? '', /^metadata\.name: Invalid value: "db\.v2": a lowercase RFC 1123 label/)
      assert.deepEqual(list.slice(1), [
        "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        'spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0',
      ])
      await assertNotStored(`${STSS}/db.v2`)
    })

    it('lets an update change replicas and the template, but nothing outside upstream’s list', async () => {
      const ok = await client.patch(`${STSS}/db`, { spec: { replicas: 3, template: { spec: { containers: [{ ...container, image: 'nginx:1.28' }] } } } }, MERGE)
      assert.equal(ok.status, 200, ok.text)
      assert.equal(ok.body.spec.replicas, 3)
      const res = await client.patch(`${STSS}/db`, { spec: { serviceName: 'other', podManagementPolicy: 'Parallel' } }, MERGE)
      assert.deepEqual(causes(res), [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ])
      assert.equal((await client.get(`${STSS}/db`)).body.spec.serviceName, 'db')
    })

    it('deletes a statefulset', async () => {
      assert.equal((await client.delete(`${STSS}/db`)).status, 200)
      await assertNotStored(`${STSS}/db`)
    })
  })

  describe('DaemonSets', () => {
    it('stores a created daemonset with upstream defaults and template generation 1', async () => {
      const created = await client.post(DSS, { metadata: { name: 'agent' }, spec: { selector, template: template() } })
      assert.equal(created.status, 201, created.text)
      const read = (await client.get(`${DSS}/agent`)).body
      assert.deepEqual(read.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } })
      assert.equal(read.spec.revisionHistoryLimit, 10)
      assert.equal(read.metadata.annotations['deprecated.daemonset.template.generation'], '1')
      assert.deepEqual(read.status, { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 })
    })

    it('refuses both rollout bounds set, and an unknown strategy, storing nothing', async () => {
      const both = await client.post(DSS, {
        metadata: { name: 'both' },
        spec: { selector, template: template(), updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '10%' } } },
      })
      assert.deepEqual(causes(both), [
        'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"10%"}: may not be set when maxUnavailable is non-zero',
      ])
      const unknown = await client.post(DSS, { metadata: { name: 'unknown' }, spec: { selector, template: template(), updateStrategy: { type: 'Sometimes' } } })
      assert.deepEqual(causes(unknown), [
        'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"',
      ])
      await assertNotStored(`${DSS}/both`)
      await assertNotStored(`${DSS}/unknown`)
    })

    it('counts template changes in the generation annotation, keeps the selector, and deletes', async () => {
      const labelled = await client.patch(`${DSS}/agent`, { metadata: { labels: { team: 'a' } } }, MERGE)
      assert.equal(labelled.body.metadata.annotations['deprecated.daemonset.template.generation'], '1')
      const changed = await client.patch(`${DSS}/agent`, { spec: { template: { spec: { containers: [{ ...container, image: 'nginx:1.28' }] } } } }, MERGE)
      assert.equal(changed.status, 200, changed.text)
      assert.equal(changed.body.metadata.annotations['deprecated.daemonset.template.generation'], '2')
      const res = await client.patch(`${DSS}/agent`, { spec: { selector: { matchLabels: { app: 'other' } } } }, MERGE)
      assert.ok(causes(res).some((c) => /^spec\.selector: Invalid value: .*: field is immutable$/.test(c)))
      assert.equal((await client.delete(`${DSS}/agent`)).status, 200)
      await assertNotStored(`${DSS}/agent`)
    })
  })

  describe('ReplicationControllers', () => {
    it('takes its selector and labels from the template and defaults replicas', async () => {
      const created = await client.post(RCS, { metadata: { name: 'rc' }, spec: { template: template({ app: 'legacy' }) } })
      assert.equal(created.status, 201, created.text)
      const read = (await client.get(`${RCS}/rc`)).body
      assert.deepEqual(read.spec.selector, { app: 'legacy' })
      assert.deepEqual(read.metadata.labels, { app: 'legacy' })
      assert.equal(read.spec.replicas, 1)
      assert.equal(read.spec.template.spec.restartPolicy, 'Always')
      assert.deepEqual(read.status, { replicas: 0 })
    })

    it('refuses a controller without template or selector, and one whose selector misses its pods', async () => {
      assert.deepEqual(causes(await client.post(RCS, { metadata: { name: 'empty' }, spec: {} })), ['spec.selector: Required value', 'spec.template: Required value'])
      const mismatch = await client.post(RCS, { metadata: { name: 'mismatch' }, spec: { selector: { app: 'x' }, template: template({ app: 'y' }) } })
      assert.deepEqual(causes(mismatch), ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`'])
      await assertNotStored(`${RCS}/empty`)
      await assertNotStored(`${RCS}/mismatch`)
    })

    it('updates replicas and deletes', async () => {
      const res = await client.patch(`${RCS}/rc`, { spec: { replicas: 4 } }, MERGE)
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.spec.replicas, 4)
      const negative = await client.patch(`${RCS}/rc`, { spec: { replicas: -4 } }, MERGE)
      assert.deepEqual(causes(negative), ['spec.replicas: Invalid value: -4: must be greater than or equal to 0'])
      assert.equal((await client.delete(`${RCS}/rc`)).status, 200)
      await assertGone(`${RCS}/rc`)
    })
  })

  describe('Jobs', () => {
    const job = (name: string, spec: Record<string, unknown> = {}) => ({
      metadata: { name },
      spec: { template: { spec: { containers: [container], restartPolicy: 'Never' } }, ...spec },
    })

    it('generates the selector and pod labels from the uid, and fills upstream defaults', async () => {
      const created = await client.post(JOBS, job('pi'))
      assert.equal(created.status, 201, created.text)
      const read = (await client.get(`${JOBS}/pi`)).body
      const uid = read.metadata.uid
      assert.ok(uid)
      assert.deepEqual(read.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } })
      assert.deepEqual(read.spec.template.metadata.labels, {
        'batch.kubernetes.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': 'pi',
        'controller-uid': uid,
        'job-name': 'pi',
      })
      const spec = read.spec
      assert.equal(spec.parallelism, 1)
      assert.equal(spec.completions, 1)
      assert.equal(spec.backoffLimit, 6)
      assert.equal(spec.completionMode, 'NonIndexed')
      assert.equal(spec.suspend, false)
      assert.equal(spec.manualSelector, false)
      assert.equal(spec.podReplacementPolicy, 'TerminatingOrFailed')
      assert.deepEqual(read.status, {})
    })

    it('labels a Job created without labels with its template\'s, the generated ones included, as upstream reads it back', async () => {
      const created = await client.post(JOBS, job('unlabelled'))
      assert.equal(created.status, 201, created.text)
      const uid = created.body.metadata.uid
      const generated = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'unlabelled', 'controller-uid': uid, 'job-name': 'unlabelled' }
      assert.deepEqual(created.body.metadata.labels, generated)
      assert.deepEqual(Object.keys(created.body.metadata), ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'labels', 'managedFields'], 'in Go\'s order')
      // Upstream's field manager ran before the strategy: nobody owns the labels.
      assert.equal(created.body.metadata.managedFields[0].fieldsV1['f:metadata'], undefined)
      const listed = await client.get(`${JOBS}?labelSelector=job-name%3Dunlabelled`)
      assert.deepEqual(listed.body.items.map((j: { metadata: { name: string } }) => j.metadata.name), ['unlabelled'])
      // A dry run answers as the create would; labels the client gave are kept as they are.
      const dryRun = await client.post(`${JOBS}?dryRun=All`, job('dry'))
      assert.equal(dryRun.body.metadata.labels['job-name'], 'dry')
      const own = await client.post(JOBS, { ...job('own'), metadata: { name: 'own', labels: { team: 'a' } } })
      assert.deepEqual(own.body.metadata.labels, { team: 'a' })
    })

    it('leaves completions unset when only parallelism is given', async () => {
      const created = await client.post(JOBS, job('workers', { parallelism: 3 }))
      assert.equal(created.status, 201, created.text)
      assert.equal(created.body.spec.parallelism, 3)
      assert.equal(created.body.spec.completions, undefined)
    })

    it('refuses a job whose pods would restart always, with negative counters, storing nothing', async () => {
      const res = await client.post(JOBS, {
        metadata: { name: 'bad-job' },
        spec: { parallelism: -1, ttlSecondsAfterFinished: -10, template: { spec: { containers: [container] } } },
      })
      assert.deepEqual(causes(res), [
        'spec.parallelism: Invalid value: -1: must be greater than or equal to 0',
        'spec.ttlSecondsAfterFinished: Invalid value: -10: must be greater than or equal to 0',
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
      ])
      await assertNotStored(`${JOBS}/bad-job`)
    })

    it('refuses pod labels that contradict the generated ones', async () => {
      const res = await client.post(JOBS, {
        metadata: { name: 'liar' },
        spec: { template: { metadata: { labels: { 'job-name': 'other' } }, spec: { containers: [container], restartPolicy: 'OnFailure' } } },
      })
      const list = causes(res)
      assert.equal(list.length, 1)
      assert.match(list[0] ?? '', /^spec\.template\.metadata\.labels\[job-name\]: Invalid value: map\[string\]string\{.*"job-name":"other".*\}: must be 'liar'$/)
      await assertNotStored(`${JOBS}/liar`)
    })

    it('takes a manual selector as given', async () => {
      const created = await client.post(JOBS, {
        metadata: { name: 'manual' },
        spec: { manualSelector: true, selector, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [container], restartPolicy: 'Never' } } },
      })
      assert.equal(created.status, 201, created.text)
      assert.deepEqual(created.body.spec.selector, selector)
      assert.deepEqual(created.body.spec.template.metadata.labels, { app: 'web' })
      assert.deepEqual(created.body.metadata.labels, { app: 'web' })
    })

    it('lets an update suspend the job or change its parallelism, but not its template, selector or completions', async () => {
      const ok = await client.patch(`${JOBS}/pi`, { spec: { suspend: true, parallelism: 2 } }, MERGE)
      assert.equal(ok.status, 200, ok.text)
      const image = await client.patch(`${JOBS}/pi`, { spec: { completions: 5, template: { spec: { containers: [{ ...container, image: 'perl:5' }] } } } }, MERGE)
      const list = causes(image)
      assert.equal(list[0], 'spec.completions: Invalid value: 5: field is immutable')
      assert.match(list[1] ?? '', /^spec\.template: Invalid value: .*: field is immutable$/)
      assert.equal(list.length, 2)
      assert.equal((await client.get(`${JOBS}/pi`)).body.spec.template.spec.containers[0].image, 'nginx:1.27')
    })

    it('lets a suspended job that never started move to other nodes', async () => {
      const res = await client.patch(`${JOBS}/pi`, { spec: { template: { spec: { nodeSelector: { zone: 'b' } } } } }, MERGE)
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body.spec.template.spec.nodeSelector, { zone: 'b' })
    })

    it('deletes a job', async () => {
      assert.equal((await client.delete(`${JOBS}/pi`)).status, 200)
      await assertGone(`${JOBS}/pi`)
    })
  })

  describe('CronJobs', () => {
    const cron = (name: string, spec: Record<string, unknown> = {}) => ({
      metadata: { name },
      spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { containers: [container], restartPolicy: 'OnFailure' } } } }, ...spec },
    })

    it('stores a created cronjob with upstream defaults', async () => {
      const created = await client.post(CRONJOBS, cron('tick', { timeZone: 'Europe/Berlin' }))
      assert.equal(created.status, 201, created.text)
      const read = (await client.get(`${CRONJOBS}/tick`)).body
      assert.equal(read.spec.concurrencyPolicy, 'Allow')
      assert.equal(read.spec.suspend, false)
      assert.equal(read.spec.successfulJobsHistoryLimit, 3)
      assert.equal(read.spec.failedJobsHistoryLimit, 1)
      assert.equal(read.spec.jobTemplate.spec.template.spec.dnsPolicy, 'ClusterFirst')
      assert.equal(read.spec.jobTemplate.spec.backoffLimit, undefined)
    })

    it('refuses a bad schedule, TZ in the schedule, an unknown zone, a selector and a long name, storing nothing', async () => {
      const name = 'a'.repeat(53)
      const res = await client.post(
        CRONJOBS,
        cron(name, { schedule: 'CRON_TZ=UTC 0 25 * * *', timeZone: 'Mars/Olympus', concurrencyPolicy: 'Sometimes', jobTemplate: { spec: { selector, template: template() } } }),
      )
      assert.deepEqual(causes(res), [
        'spec.schedule: Invalid value: "CRON_TZ=UTC 0 25 * * *": end of range (25) above maximum (23): 25',
        'spec.schedule: Invalid value: "CRON_TZ=UTC 0 25 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
        'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        'spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated',
        `metadata.name: Invalid value: "${name}": must be no more than 52 characters`,
      ])
      await assertNotStored(`${CRONJOBS}/${name}`)
    })

    it('updates the schedule, refuses a broken one, and deletes', async () => {
      const ok = await client.patch(`${CRONJOBS}/tick`, { spec: { schedule: '@hourly' } }, MERGE)
      assert.equal(ok.status, 200, ok.text)
      assert.equal(ok.body.metadata.generation, 2)
      const bad = await client.patch(`${CRONJOBS}/tick`, { spec: { schedule: '0 0 * *' } }, MERGE)
      assert.deepEqual(causes(bad), ['spec.schedule: Invalid value: "0 0 * *": expected exactly 5 fields, found 4: [0 0 * *]'])
      assert.equal((await client.delete(`${CRONJOBS}/tick`)).status, 200)
      await assertNotStored(`${CRONJOBS}/tick`)
    })
  })
})
