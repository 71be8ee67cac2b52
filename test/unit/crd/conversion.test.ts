/**
 * A custom resource's version conversion: None changes only apiVersion;
 * Webhook sends a ConversionReview and refuses every answer upstream refuses,
 * with upstream's wording, as 500 Internal errors.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { customResourceConversion, type ConversionDeps } from '../../../core/crd/conversion.js'
import type { WebhookClient, WebhookTarget } from '../../../core/crd/webhook-client.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import type { CustomResourceConversion, CustomResourceDefinition } from '../../../core/resources/apiextensions/types.js'
import type { KubeObject } from '../../../core/machinery/object.js'

function crontabs(conversion?: CustomResourceConversion): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'crontabs.stable.example.com' },
    spec: {
      group: 'stable.example.com',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', listKind: 'CronTabList' },
      scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: false },
        { name: 'v2', served: true, storage: true },
      ],
      ...(conversion ? { conversion } : {}),
    },
  }
}

const webhookCRD = (reviewVersions = ['v1'], clientConfig: object = { url: 'https://hook.example/convert', caBundle: 'Q0E=' }) =>
  crontabs({ strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions: reviewVersions } })

function crontab(apiVersion: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion,
    kind: 'CronTab',
    metadata: {
      name: 'nightly',
      namespace: 'jobs',
      uid: 'u-1',
      resourceVersion: '42',
      labels: { app: 'cron' },
      annotations: { note: 'x' },
      creationTimestamp: '2024-01-01T00:00:00Z',
    },
    spec: { cronSpec: '0 0 * * *' },
    ...extra,
  }
}

interface Call {
  target: WebhookTarget
  body: { apiVersion: string; kind: string; request: { uid: string; desiredAPIVersion: string; objects: KubeObject[] } }
  timeoutMs: number
}

/** A webhook that answers with `respond(request)`; by default it converts by rewriting apiVersion and moving cronSpec. */
function fakeWebhook(respond?: (body: Call['body']) => unknown): { client: WebhookClient; calls: Call[] } {
  const calls: Call[] = []
  const convertAll = (body: Call['body']) => ({
    apiVersion: body.apiVersion,
    kind: 'ConversionReview',
    response: {
      uid: body.request.uid,
      result: { status: 'Success' },
      convertedObjects: body.request.objects.map((o) => {
        const spec = o['spec'] as Record<string, unknown>
        const moved = body.request.desiredAPIVersion.endsWith('/v2')
          ? { schedule: spec['cronSpec'] }
          : { cronSpec: spec['schedule'] }
        return { ...o, apiVersion: body.request.desiredAPIVersion, spec: moved }
      }),
    },
  })
  const client: WebhookClient = {
    post: async (target, body, timeoutMs) => {
      const call = { target, body: body as Call['body'], timeoutMs }
      calls.push(call)
      return (respond ?? convertAll)(call.body)
    },
    get: () => Promise.reject(new Error('conversion never GETs')),
  }
  return { client, calls }
}

/** Answers a successful v1 review with exactly `objects`. */
const answering =
  (objects: (req: Call['body']) => unknown[]) =>
  (body: Call['body']): unknown => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid: body.request.uid, result: { status: 'Success' }, convertedObjects: objects(body) },
  })

async function conversionError(promise: Promise<unknown> | unknown): Promise<StatusError> {
  try {
    await promise
  } catch (err) {
    assert.ok(err instanceof StatusError, `expected a StatusError, got ${String(err)}`)
    return err
  }
  assert.fail('expected the conversion to fail')
}

const deps = (client: WebhookClient, extra: Partial<ConversionDeps> = {}): ConversionDeps => ({ client, newUID: () => 'review-1', ...extra })

describe('custom resource conversion, strategy None', () => {
  it('changes only apiVersion, to the storage version on the way in and the served one out', () => {
    const conversion = customResourceConversion(crontabs(), 'v1')
    assert.equal(conversion.storageVersion, 'stable.example.com/v2')
    const stored = conversion.toStorage(crontab('stable.example.com/v1')) as KubeObject
    assert.deepEqual(stored, crontab('stable.example.com/v2'))
    assert.deepEqual(conversion.fromStorage(stored), crontab('stable.example.com/v1'))
  })

  it('reads objects stored in an older storage version, and leaves those already served untouched', () => {
    const conversion = customResourceConversion(crontabs(), 'v2')
    const old = crontab('stable.example.com/v1')
    assert.equal((conversion.fromStorage(old) as KubeObject).apiVersion, 'stable.example.com/v2')
    const same = crontab('stable.example.com/v2')
    assert.equal(conversion.fromStorage(same), same)
  })
})

describe('custom resource conversion, strategy Webhook', () => {
  it('sends a v1 ConversionReview and keeps the original metadata but for labels and annotations', async () => {
    const { client, calls } = fakeWebhook((body) =>
      answering((req) =>
        req.request.objects.map((o) => ({
          ...o,
          apiVersion: req.request.desiredAPIVersion,
          metadata: { name: 'nightly', namespace: 'jobs', uid: 'u-1', labels: { app: 'cron', converted: 'yes' }, resourceVersion: '999' },
          spec: { schedule: '0 0 * * *' },
        })),
      )(body),
    )
    const conversion = customResourceConversion(webhookCRD(), 'v1', deps(client, { timeoutMs: 1234 }))
    const stored = await conversion.toStorage(crontab('stable.example.com/v1'))
    assert.equal(calls.length, 1)
    const { target, body, timeoutMs } = calls[0]!
    assert.deepEqual(target, { url: 'https://hook.example/convert', caBundle: 'Q0E=', egress: 'controlplane' })
    assert.equal(timeoutMs, 1234)
    assert.deepEqual(body, {
      kind: 'ConversionReview',
      apiVersion: 'apiextensions.k8s.io/v1',
      request: { uid: 'review-1', desiredAPIVersion: 'stable.example.com/v2', objects: [crontab('stable.example.com/v1')] },
    })
    assert.equal(stored.apiVersion, 'stable.example.com/v2')
    assert.deepEqual(stored['spec'], { schedule: '0 0 * * *' })
    // resourceVersion and creationTimestamp come from the original; annotations were dropped by the webhook.
    assert.deepEqual(stored.metadata, {
      name: 'nightly',
      namespace: 'jobs',
      uid: 'u-1',
      resourceVersion: '42',
      labels: { app: 'cron', converted: 'yes' },
      creationTimestamp: '2024-01-01T00:00:00Z',
    })
  })

  it('does not call the webhook for an object already in the wanted version', () => {
    const { client, calls } = fakeWebhook()
    const conversion = customResourceConversion(webhookCRD(), 'v2', deps(client))
    const obj = crontab('stable.example.com/v2')
    assert.equal(conversion.fromStorage(obj), obj)
    assert.equal(conversion.toStorage(obj), obj)
    assert.equal(calls.length, 0)
  })

  it('uses v1beta1 when it comes first among the review versions it speaks, without the uid check', async () => {
    const { client, calls } = fakeWebhook((body) => ({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'ConversionReview',
      response: {
        uid: 'someone-else',
        result: { status: 'Success' },
        convertedObjects: body.request.objects.map((o) => ({ ...o, apiVersion: body.request.desiredAPIVersion })),
      },
    }))
    const conversion = customResourceConversion(webhookCRD(['v9', 'v1beta1', 'v1']), 'v1', deps(client))
    const served = await conversion.fromStorage(crontab('stable.example.com/v2'))
    assert.equal(calls[0]!.body.apiVersion, 'apiextensions.k8s.io/v1beta1')
    assert.equal(served.apiVersion, 'stable.example.com/v1')
  })

  it('converts a page with one review, sending only the objects in another version', async () => {
    const { client, calls } = fakeWebhook()
    const conversion = customResourceConversion(webhookCRD(), 'v2', deps(client))
    const already = crontab('stable.example.com/v2', { metadata: { name: 'b', namespace: 'jobs', uid: 'u-b' } })
    const page = [
      crontab('stable.example.com/v1', { metadata: { name: 'a', namespace: 'jobs', uid: 'u-a' } }),
      already,
      crontab('stable.example.com/v1', { metadata: { name: 'c', namespace: 'jobs', uid: 'u-c' } }),
    ]
    const served = await conversion.fromStorageAll!(page)
    assert.equal(calls.length, 1)
    assert.deepEqual(
      calls[0]!.body.request.objects.map((o) => o.metadata.name),
      ['a', 'c'],
    )
    assert.deepEqual(
      served.map((o) => [o.metadata.name, o.apiVersion, o['spec']]),
      [
        ['a', 'stable.example.com/v2', { schedule: '0 0 * * *' }],
        ['b', 'stable.example.com/v2', { cronSpec: '0 0 * * *' }],
        ['c', 'stable.example.com/v2', { schedule: '0 0 * * *' }],
      ],
    )
    assert.equal(served[1], already)
  })

  it('offers selectors the stored object under the served apiVersion, without calling the webhook', () => {
    const { client, calls } = fakeWebhook()
    const conversion = customResourceConversion(webhookCRD(), 'v1', deps(client))
    const view = conversion.forSelection!(crontab('stable.example.com/v2'))
    assert.equal(view.apiVersion, 'stable.example.com/v1')
    assert.deepEqual(view.metadata.labels, { app: 'cron' })
    assert.equal(calls.length, 0)
  })

  it('resolves a service reference through the given resolver and checks the certificate for <name>.<namespace>.svc', async () => {
    const { client, calls } = fakeWebhook()
    const crd = webhookCRD(['v1'], { service: { namespace: 'hooks', name: 'converter', path: '/convert', port: 8443 }, caBundle: 'Q0E=' })
    const seen: unknown[] = []
    const resolveService = async (ref: unknown) => {
      seen.push(ref)
      return 'https://10.0.0.7:8443/'
    }
    await customResourceConversion(crd, 'v1', deps(client, { resolveService })).fromStorage(crontab('stable.example.com/v2'))
    assert.deepEqual(seen, [{ namespace: 'hooks', name: 'converter', path: '/convert', port: 8443 }])
    assert.deepEqual(calls[0]!.target, { url: 'https://10.0.0.7:8443/convert', caBundle: 'Q0E=', serverName: 'converter.hooks.svc', egress: 'cluster' })
  })

  it('fails clearly when a service reference cannot be resolved', async () => {
    const { client, calls } = fakeWebhook()
    const crd = webhookCRD(['v1'], { service: { namespace: 'hooks', name: 'converter', port: 443 } })
    const err = await conversionError(customResourceConversion(crd, 'v1', deps(client)).fromStorage(crontab('stable.example.com/v2')))
    assert.equal(
      err.message,
      'Internal error occurred: conversion webhook for stable.example.com/v2, Kind=CronTab failed: cannot reach service hooks/converter: no service resolver is configured',
    )
    assert.equal(calls.length, 0)
  })
})

describe('custom resource conversion, refused webhook answers', () => {
  const prefix = 'Internal error occurred: conversion webhook for stable.example.com/v2, Kind=CronTab'
  const base = (body: Call['body']) => ({ ...crontab(body.request.desiredAPIVersion) })

  const cases: { name: string; respond: (body: Call['body']) => unknown; message: string; reviews?: string[] }[] = [
    {
      name: 'a failed call',
      respond: () => {
        throw new Error('Post "https://hook.example/convert": dial tcp hook.example:443: connect: connection refused')
      },
      message: `${prefix} failed: Post "https://hook.example/convert": dial tcp hook.example:443: connect: connection refused`,
    },
    {
      name: 'a response of another kind',
      respond: (body) => ({ ...(answering((b) => [base(b)])(body) as object), kind: 'AdmissionReview' }),
      message: `${prefix} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=AdmissionReview`,
    },
    {
      name: 'no response',
      respond: () => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }),
      message: `${prefix} failed: no response provided`,
    },
    {
      name: 'another uid',
      respond: (body) => {
        const reply = answering((b) => [base(b)])(body) as { response: { uid: string } }
        reply.response.uid = 'other'
        return reply
      },
      message: `${prefix} failed: expected response.uid="review-1", got "other"`,
    },
    {
      name: 'a failure with a message',
      respond: (body) => ({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response: { uid: body.request.uid, result: { status: 'Failure', message: 'cannot convert cronSpec' } },
      }),
      message: `${prefix} failed: cannot convert cronSpec`,
    },
    {
      name: 'a failure without a message',
      respond: (body) => ({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response: { uid: body.request.uid, result: { status: 'Failure' } },
      }),
      message: `${prefix} failed: response.result.status was 'Failure', not 'Success'`,
    },
    {
      name: 'the wrong number of objects',
      respond: answering((b) => [base(b), base(b)]),
      message: `${prefix} returned 2 objects, expected 1`,
    },
    {
      name: 'an object in another version',
      respond: answering((b) => [{ ...base(b), apiVersion: 'stable.example.com/v2' }]),
      message: `${prefix} returned invalid object at index 0: invalid groupVersion (expected stable.example.com/v1, received stable.example.com/v2)`,
    },
    {
      name: 'an object of another kind',
      respond: answering((b) => [{ ...base(b), kind: 'Job' }]),
      message: `${prefix} returned invalid object at index 0: invalid kind (expected CronTab, received Job)`,
    },
    {
      name: 'a renamed object',
      respond: answering((b) => [{ ...base(b), metadata: { ...base(b).metadata, name: 'daily' } }]),
      message: `${prefix} returned invalid object: must have the same name: nightly != daily`,
    },
    {
      name: 'an object moved to another namespace',
      respond: answering((b) => [{ ...base(b), metadata: { ...base(b).metadata, namespace: 'other' } }]),
      message: `${prefix} returned invalid object: must have the same namespace: jobs != other`,
    },
    {
      name: 'an object with another uid',
      respond: answering((b) => [{ ...base(b), metadata: { ...base(b).metadata, uid: 'u-2' } }]),
      message: `${prefix} returned invalid object: must have the same UID: u-1 != u-2`,
    },
    {
      name: 'an object without metadata',
      respond: answering((b) => [{ apiVersion: b.request.desiredAPIVersion, kind: 'CronTab' }]),
      message: `${prefix} returned invalid object: must have the same name: nightly != `,
    },
    {
      name: 'a label value that is not a string',
      respond: answering((b) => [{ ...base(b), metadata: { ...base(b).metadata, labels: { app: 3 } } }]),
      message: `${prefix} returned invalid metadata: metadata.labels[app] must be a string, but is int64 in converted object`,
    },
    {
      name: 'an invalid new label',
      respond: answering((b) => [{ ...base(b), metadata: { ...base(b).metadata, labels: { app: 'cron', tier: 'not valid!' } } }]),
      message:
        `${prefix} returned invalid metadata: metadata.labels: Invalid value: "not valid!": a valid label must be an empty string or consist of alphanumeric characters, ` +
        `'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    },
    {
      name: 'an invalid new annotation (named at upstream\'s path metadata.annotation)',
      respond: answering((b) => [{ ...base(b), metadata: { ...base(b).metadata, annotations: { 'bad key!': 'v' } } }]),
      message:
        `${prefix} returned invalid metadata: metadata.annotation: Invalid value: "bad key!": name part must consist of alphanumeric characters, ` +
        `'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    },
    {
      name: 'no supported review version',
      reviews: ['v2'],
      respond: answering((b) => [base(b)]),
      message: 'Internal error occurred: no supported conversion review versions',
    },
  ]

  for (const c of cases) {
    it(`refuses ${c.name} with a 500 Internal error`, async () => {
      const { client } = fakeWebhook(c.respond)
      const conversion = customResourceConversion(webhookCRD(c.reviews), 'v1', deps(client))
      const err = await conversionError(conversion.fromStorage(crontab('stable.example.com/v2')))
      assert.equal(err.code, 500)
      assert.equal(err.reason, 'InternalError')
      assert.equal(err.message, c.message)
    })
  }

  it('names the page and the position (counted from 1, as upstream) when one object of a page is refused', async () => {
    const { client } = fakeWebhook(
      answering((b) =>
        b.request.objects.map((o, i) => ({ ...o, apiVersion: b.request.desiredAPIVersion, ...(i === 1 ? { kind: 'Job' } : {}) })),
      ),
    )
    const conversion = customResourceConversion(webhookCRD(), 'v1', deps(client))
    const page = ['a', 'b'].map((name) => crontab('stable.example.com/v2', { metadata: { name, namespace: 'jobs' } }))
    const err = await conversionError(conversion.fromStorageAll!(page))
    assert.equal(
      err.message,
      'Internal error occurred: conversion webhook for stable.example.com/v1, Kind=CronTabList returned invalid converted object at index 2: invalid kind (expected CronTab, received Job)',
    )
  })

  it('refuses a page answered with fewer objects than sent', async () => {
    const { client } = fakeWebhook(answering(() => []))
    const conversion = customResourceConversion(webhookCRD(), 'v1', deps(client))
    const page = ['a', 'b'].map((name) => crontab('stable.example.com/v2', { metadata: { name, namespace: 'jobs' } }))
    const err = await conversionError(conversion.fromStorageAll!(page))
    assert.equal(err.message, 'Internal error occurred: conversion webhook for stable.example.com/v1, Kind=CronTabList returned 0 objects, expected 2')
  })
})
