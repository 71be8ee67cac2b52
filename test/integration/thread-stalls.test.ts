/**
 * Inputs whose cost grew faster than their size on the serving thread: a
 * long run of digits in a quantity, a body of many duplicate fields under
 * fieldValidation=Warn, a regular expression too large to compile. Each is
 * answered as before. No clock decides a test here (the machine's load
 * would): the work is counted where it can be (compilations below; the
 * warnings read in test/unit/registry/field-validation-warnings.test.ts),
 * and the quantities' backtracking, which no count reaches inside the
 * regular expression engine, took minutes at these sizes, past the
 * suite's timeout.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { RE2JS } from 're2js'
import { installDefinition, widgetDefinition } from './crd-fixtures.js'
import { startServer } from './harness.js'

const PODS = '/api/v1/namespaces/default/pods'
const CM = '/api/v1/namespaces/default/configmaps'
const QUANTITY_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

function podWithCpu(name: string, cpu: string): unknown {
  return { metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { cpu } } }] } }
}

describe('inputs that grow work faster than their size', { timeout: 120_000 }, () => {
  it('refuses a quantity of 200000 digits and a letter with 400, without backtracking through the digits', async () => {
    const api = await startServer()
    const answer = await api.post(PODS, podWithCpu('digits', `${'1'.repeat(200_000)}x`))
    assert.equal(answer.status, 400, answer.text.slice(0, 300))
    assert.equal(answer.body.message, `Pod in version "v1" cannot be handled as a Pod: ${QUANTITY_MESSAGE}`)
    assert.equal((await api.get(`${PODS}/digits`)).status, 404)
  })

  it('stores a quantity of one and 200000 zeros in canonical form, and rounds one of 200000 nines up to the nano', async () => {
    const api = await startServer()
    const zeros = await api.post(PODS, podWithCpu('zeros', `1${'0'.repeat(200_000)}`))
    assert.equal(zeros.status, 201, zeros.text.slice(0, 300))
    assert.equal(zeros.body.spec.containers[0].resources.limits.cpu, '100e199998')
    // 1999...9.5 nanos rounds up to 2 followed by 200000 zeros, in nanos.
    const nines = await api.post(PODS, podWithCpu('nines', `1${'9'.repeat(200_000)}.5n`))
    assert.equal(nines.status, 201, nines.text.slice(0, 300))
    assert.equal(nines.body.spec.containers[0].resources.limits.cpu, '200e199989')
  })

  it('warns once per field for a body of 20000 duplicate fields under fieldValidation=Warn, without comparing each with all before it', async () => {
    const api = await startServer()
    const fields = Array.from({ length: 40_000 }, (_, i) => `"k${i % 20_000}":"v"`).join(',')
    const body = `{"metadata":{"name":"dups"},"data":{${fields}}}`
    const answer = await api.post(`${CM}?fieldValidation=Warn`, body)
    assert.equal(answer.status, 201, answer.text.slice(0, 300))
    const warning = answer.headers.get('warning') ?? ''
    assert.match(warning, /^299 - "duplicate field \\"data\.k0\\"", 299 - "duplicate field \\"data\.k1\\""/)
    assert.equal(warning.split('data.k0').length, 2, 'each duplicate is warned of once')
    assert.equal(Object.keys((await api.get(`${CM}/dups`)).body.data).length, 20_000)
  })
})

describe('regular expressions a rule takes from the object', { timeout: 120_000 }, () => {
  const GROUP = 'stalls.example.com'
  const FILTERS = `/apis/${GROUP}/v1/namespaces/default/widgets`
  const definition = widgetDefinition(GROUP, {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { name: { type: 'string', maxLength: 64 }, pattern: { type: 'string', maxLength: 16384 } },
        'x-kubernetes-validations': [{ rule: 'self.name.matches(self.pattern)' }],
      },
    },
  })

  // Each pattern re2js is asked to compile, counted through its entry point.
  let compiled: string[] = []
  const compile = RE2JS.compile.bind(RE2JS)
  before(() => {
    RE2JS.compile = ((pattern: string, flags?: number) => {
      compiled.push(pattern)
      return compile(pattern, flags)
    }) as typeof RE2JS.compile
  })
  after(() => {
    RE2JS.compile = compile
  })

  it('refuses a pattern of a million instructions as too large, with 422, without compiling it, and matches small ones', async () => {
    const api = await startServer()
    await installDefinition(api, definition)
    const filter = (name: string, pattern: string) => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, spec: { name: 'ab', pattern } })
    assert.equal((await api.post(FILTERS, filter('small', '^a[b-c]$'))).status, 201)
    // 7,000 characters that re2js compiles to a million instructions: 2 s of the thread and 70 MB kept, for each such pattern.
    const pattern = 'a{1000}'.repeat(1000)
    compiled = []
    const refused = await api.post(FILTERS, filter('large', pattern))
    assert.ok(!compiled.includes(pattern), 'the pattern was compiled')
    assert.equal(refused.status, 422, refused.text.slice(0, 300))
    assert.ok(refused.body.message.includes('error parsing regexp: expression too large: `a{1000}a{1000}'), refused.body.message.slice(0, 300))
    assert.equal((await api.get(`${FILTERS}/large`)).status, 404)
  })
})
