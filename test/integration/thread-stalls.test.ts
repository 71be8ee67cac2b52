/**
 * Inputs whose cost grew faster than their size on the serving thread: a
 * long run of digits in a quantity, and a body of many duplicate fields
 * under fieldValidation=Warn. Each is answered as before, and no request
 * holds the event loop for as long as a second.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { installDefinition } from './crd-fixtures.js'
import { startServer } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const CM = '/api/v1/namespaces/default/configmaps'
const QUANTITY_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

/** The answer to `request`, and the longest the event loop was held while it ran (ms): the longest gap between ticks of a 10 ms timer. */
async function longestBlock<T>(request: () => Promise<T>): Promise<{ answer: T; blockedMs: number }> {
  let last = performance.now()
  let blockedMs = 0
  const ticks = setInterval(() => {
    const now = performance.now()
    blockedMs = Math.max(blockedMs, now - last)
    last = now
  }, 10)
  try {
    const answer = await request()
    // A later timer, so that the tick due during a block that ended with the answer runs first.
    await new Promise((resolve) => setTimeout(resolve, 20))
    return { answer, blockedMs }
  } finally {
    clearInterval(ticks)
  }
}

function podWithCpu(name: string, cpu: string): unknown {
  return { metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { cpu } } }] } }
}

describe('inputs that grow work faster than their size', { timeout: 120_000 }, () => {
  it('refuses a quantity of 200000 digits and a letter with 400, without backtracking through the digits', async () => {
    const api = await startServer()
    const { answer, blockedMs } = await longestBlock(() => api.post(PODS, podWithCpu('digits', `${'1'.repeat(200_000)}x`)))
    assert.equal(answer.status, 400, answer.text.slice(0, 300))
    assert.equal(answer.body.message, `Pod in version "v1" cannot be handled as a Pod: ${QUANTITY_MESSAGE}`)
    assert.ok(blockedMs < 1000, `the event loop was held ${blockedMs.toFixed(0)} ms`)
    assert.equal((await api.get(`${PODS}/digits`)).status, 404)
  })

  it('stores a quantity of one and 200000 zeros in canonical form, and rounds one of 200000 nines up to the nano', async () => {
    const api = await startServer()
    const zeros = await longestBlock(() => api.post(PODS, podWithCpu('zeros', `1${'0'.repeat(200_000)}`)))
    assert.equal(zeros.answer.status, 201, zeros.answer.text.slice(0, 300))
    assert.equal(zeros.answer.body.spec.containers[0].resources.limits.cpu, '100e199998')
    assert.ok(zeros.blockedMs < 1000, `the event loop was held ${zeros.blockedMs.toFixed(0)} ms`)
    // 1999...9.5 nanos rounds up to 2 followed by 200000 zeros, in nanos.
    const nines = await longestBlock(() => api.post(PODS, podWithCpu('nines', `1${'9'.repeat(200_000)}.5n`)))
    assert.equal(nines.answer.status, 201, nines.answer.text.slice(0, 300))
    assert.equal(nines.answer.body.spec.containers[0].resources.limits.cpu, '200e199989')
    assert.ok(nines.blockedMs < 1000, `the event loop was held ${nines.blockedMs.toFixed(0)} ms`)
  })

  it('warns once per field for a body of 20000 duplicate fields under fieldValidation=Warn, without comparing each with all before it', async () => {
    const api = await startServer()
    const fields = Array.from({ length: 40_000 }, (_, i) => `"k${i % 20_000}":"v"`).join(',')
    const body = `{"metadata":{"name":"dups"},"data":{${fields}}}`
    const { answer, blockedMs } = await longestBlock(() => api.post(`${CM}?fieldValidation=Warn`, body))
    assert.equal(answer.status, 201, answer.text.slice(0, 300))
    const warning = answer.headers.get('warning') ?? ''
    assert.match(warning, /^299 - "duplicate field \\"data\.k0\\"", 299 - "duplicate field \\"data\.k1\\""/)
    assert.equal(warning.split('data.k0').length, 2, 'each duplicate is warned of once')
    assert.ok(blockedMs < 1000, `the event loop was held ${blockedMs.toFixed(0)} ms`)
    assert.equal(Object.keys((await api.get(`${CM}/dups`)).body.data).length, 20_000)
  })
})

describe('regular expressions a rule takes from the object', { timeout: 120_000 }, () => {
  const GROUP = 'stalls.example.com'
  const FILTERS = `/apis/${GROUP}/v1/namespaces/default/filters`
  const definition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `filters.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'filters', singular: 'filter', kind: 'Filter' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { name: { type: 'string', maxLength: 64 }, pattern: { type: 'string', maxLength: 16384 } },
                  'x-kubernetes-validations': [{ rule: 'self.name.matches(self.pattern)' }],
                },
              },
            },
          },
        },
      ],
    },
  }

  it('refuses a pattern of a million instructions as too large, with 422, and matches small ones', async () => {
    const api = await startServer()
    await installDefinition(api, definition)
    const filter = (name: string, pattern: string) => ({ apiVersion: `${GROUP}/v1`, kind: 'Filter', metadata: { name }, spec: { name: 'ab', pattern } })
    assert.equal((await api.post(FILTERS, filter('small', '^a[b-c]$'))).status, 201)
    // 7,000 characters that re2js compiles to a million instructions: 2 s of the thread and 70 MB kept, for each such pattern.
    const pattern = 'a{1000}'.repeat(1000)
    const refused = await api.post(FILTERS, filter('large', pattern))
    assert.equal(refused.status, 422, refused.text.slice(0, 300))
    assert.ok(refused.body.message.includes('error parsing regexp: expression too large: `a{1000}a{1000}'), refused.body.message.slice(0, 300))
    assert.equal((await api.get(`${FILTERS}/large`)).status, 404)
  })
})
