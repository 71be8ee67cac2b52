/**
 * A body of a megabyte or two can hold hundreds of thousands of invalid
 * items, and a query a megabyte of field manager: each makes an error of
 * its own, as upstream's validation does. The lists were gathered with
 * `errs.push(...more)`, which passes every error as an argument of one call;
 * past some 100,000 the call overflowed the stack and the answer was 500.
 * They are appended one by one now (appendAll), and the answer is
 * upstream's 422. The field manager's characters are each looked at once,
 * without an encoder or a pattern per ASCII character (a megabyte of them
 * held the thread a second and a half).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { writeOptionErrors } from '../../core/registry/write-options.js'
import { startServer, type TestClient } from './harness.js'

const CM = '/api/v1/namespaces/default/configmaps'
const SERVICES = '/api/v1/namespaces/default/services'

describe('validation errors by the hundred thousand', { timeout: 120_000 }, () => {
  let api: TestClient
  before(async () => {
    api = await startServer()
  })

  it('refuses a ConfigMap of 200000 invalid finalizers with 422, and stores nothing', async () => {
    const res = await api.post(CM, `{"metadata":{"name":"finalizers","finalizers":[${Array(200_000).fill('"!"').join(',')}]}}`)
    assert.equal(res.status, 422, res.text.slice(0, 300))
    assert.equal(res.body.reason, 'Invalid')
    assert.match(res.body.message, /^ConfigMap "finalizers" is invalid: \[metadata\.finalizers: Invalid value: "!": name part must consist of /)
    assert.match(res.body.message, /, \d+ more errors not shown\]$/)
    assert.equal((await api.get(`${CM}/finalizers`)).status, 404)
  })

  it('refuses a Service of 200000 empty ports with 422, and stores nothing', async () => {
    const res = await api.post(SERVICES, `{"metadata":{"name":"ports"},"spec":{"ports":[${Array(200_000).fill('{}').join(',')}]}}`)
    assert.equal(res.status, 422, res.text.slice(0, 300))
    assert.match(res.body.message, /^Service "ports" is invalid: \[spec\.ports\[0\]\.name: Required value, spec\.ports\[0\]\.port: Invalid value: 0: /)
    assert.equal((await api.get(`${SERVICES}/ports`)).status, 404)
  })

  it('refuses a patch whose field manager is 200000 control characters with 422 on PatchOptions, and changes nothing', async () => {
    assert.equal((await api.post(CM, { metadata: { name: 'patched' }, data: { a: 'b' } })).status, 201)
    const res = await api.patch(`${CM}/patched?fieldManager=${'%01'.repeat(200_000)}`, { data: { a: 'c' } }, 'application/merge-patch+json')
    assert.equal(res.status, 422, res.text.slice(0, 300))
    assert.equal(res.body.message, 'PatchOptions.meta.k8s.io "" is invalid: [fieldManager: Too long: may not be more than 128 bytes, 200000 more errors not shown]')
    assert.deepEqual((await api.get(`${CM}/patched`)).body.data, { a: 'b' })
  })
})

describe('a field manager of a megabyte', () => {
  // Calls of the two per-character costs the check had: a pattern's test and an encoder.
  let tests = 0
  let encodes = 0
  const test = RegExp.prototype.test
  const encode = TextEncoder.prototype.encode
  before(() => {
    RegExp.prototype.test = function (this: RegExp, text: string) {
      tests++
      return test.call(this, text)
    }
    TextEncoder.prototype.encode = function (this: InstanceType<typeof TextEncoder>, text?: string) {
      encodes++
      return encode.call(this, text)
    }
  })
  after(() => {
    RegExp.prototype.test = test
    TextEncoder.prototype.encode = encode
  })

  it('is checked without a pattern or an encoder per ASCII character', () => {
    tests = 0
    encodes = 0
    const errs = writeOptionErrors(new URLSearchParams({ fieldManager: `${'a'.repeat(1_000_000)}\t` }))
    assert.deepEqual(
      errs.map((e) => [e.type, e.detail]),
      [
        ['FieldValueTooLong', 'may not be more than 128 bytes'],
        ['FieldValueInvalid', 'invalid character U+0009 (at position 1000000)'],
      ],
    )
    assert.equal(tests, 0)
    assert.equal(encodes, 0)
  })

  it('still finds the characters Go does not print beyond ASCII, at their byte position', () => {
    const errs = writeOptionErrors(new URLSearchParams({ fieldManager: 'é\u00a0ü\u200bx' }))
    assert.deepEqual(
      errs.map((e) => e.detail),
      ['invalid character U+00A0 (at position 2)', 'invalid character U+200B (at position 6)'],
    )
  })
})
