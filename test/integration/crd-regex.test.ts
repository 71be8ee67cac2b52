/**
 * Regular expressions in custom resource definitions run on RE2: a
 * pathological pattern or `matches()` answers at once while other clients
 * are served, and JavaScript-only syntax (lookaround, backreferences) is
 * refused when the definition is written, with upstream's messages.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CRDS, installDefinition } from './crd-fixtures.js'
import { startServer, type TestClient } from './harness.js'

const GROUP = 'regex.example.com'
const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`
/** Backtracking engines take about 2^35 steps for this input; RE2 takes one pass. */
const PATHOLOGICAL = `${'a'.repeat(35)}!`

function widgetDefinition(name: Record<string, unknown>, rules: { rule: string; message?: string }[] = []) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { name: { type: 'string', ...name } }, ...(rules.length ? { 'x-kubernetes-validations': rules } : {}) },
              },
            },
          },
        },
      ],
    },
  }
}

const widget = (name: string, value: string) => ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, spec: { name: value } })

/** Creates a widget while another client lists config maps; both must be answered. */
async function createBesideAnotherClient(api: TestClient, body: unknown) {
  const [created, other] = await Promise.all([api.post(WIDGETS, body), api.get('/api/v1/namespaces/default/configmaps')])
  assert.equal(other.status, 200, other.text)
  return created
}

describe('regular expressions in custom resources run on RE2', { timeout: 60_000 }, () => {
  it("answers a pathological `pattern` with 422 while another client's GET is served, and stores nothing", async () => {
    const api = await startServer()
    await installDefinition(api, widgetDefinition({ pattern: '^(a+)+$' }))
    const res = await createBesideAnotherClient(api, widget('bad', PATHOLOGICAL))
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.message, `Widget.${GROUP} "bad" is invalid: spec.name: Invalid value: "${PATHOLOGICAL}": spec.name in body should match '^(a+)+$'`)
    assert.equal((await api.get(`${WIDGETS}/bad`)).status, 404)
    assert.equal((await createBesideAnotherClient(api, widget('good', 'a'.repeat(10_000)))).status, 201)
  })

  it("answers matches() in a rule with 422 while another client's GET is served, and stores nothing", async () => {
    const api = await startServer()
    await installDefinition(api, widgetDefinition({}, [{ rule: "self.name.matches('^(a+)+$')", message: 'name must be a run of a' }]))
    const res = await createBesideAnotherClient(api, widget('bad', PATHOLOGICAL))
    assert.equal(res.status, 422, res.text)
    assert.equal(res.body.message, `Widget.${GROUP} "bad" is invalid: spec: Invalid value: "object": name must be a run of a`)
    assert.equal((await api.get(`${WIDGETS}/bad`)).status, 404)
    assert.equal((await createBesideAnotherClient(api, widget('good', 'aaaa'))).status, 201)
  })

  it('accepts RE2 syntax that JavaScript lacks, with its meaning', async () => {
    const api = await startServer()
    await installDefinition(api, widgetDefinition({ pattern: '^\\pL+\\z' }, [{ rule: "self.name.find('(?P<first>\\\\pL)') == 'x'" }]))
    assert.equal((await api.post(WIDGETS, widget('letters', 'xyz'))).status, 201)
    const digits = await api.post(WIDGETS, widget('digits', 'x12'))
    assert.equal(digits.status, 422, digits.text)
    assert.match(digits.body.message, /spec\.name in body should match '\^\\pL\+\\z'/)
  })

  const PROPERTY = 'properties[spec].properties[name]'
  for (const [what, pattern, reason] of [
    ['a lookahead', '^(?=a)a$', 'invalid or unsupported Perl syntax: `(?=`'],
    ['a negative lookahead', '^(?!b)a$', 'invalid or unsupported Perl syntax: `(?!`'],
    ['a lookbehind', '(?<=a)b', 'invalid named capture: `(?<=a)b`'],
    ['a backreference', '^(a)\\1$', 'invalid escape sequence: `\\1`'],
  ] as const) {
    it(`refuses a definition whose pattern has ${what}, with upstream's message, and stores nothing`, async () => {
      const api = await startServer()
      const res = await api.post(CRDS, widgetDefinition({ pattern }))
      assert.equal(res.status, 422, res.text)
      assert.ok(
        res.body.details.causes.some(
          (c: { field: string; message: string }) =>
            c.field.endsWith(`${PROPERTY}.pattern`) &&
            c.message === `Invalid value: ${JSON.stringify(pattern)}: must be a valid regular expression, but isn't: error parsing regexp: ${reason}`,
        ),
        res.text,
      )
      assert.ok(res.body.message.includes(`must be a valid regular expression, but isn't: error parsing regexp: ${reason}`), res.text)
      assert.equal((await api.get(`${CRDS}/widgets.${GROUP}`)).status, 404)
    })
  }

  it("refuses a rule whose matches() literal has a lookbehind, with cel-go's message, and stores nothing", async () => {
    const api = await startServer()
    const res = await api.post(CRDS, widgetDefinition({}, [{ rule: "self.name.matches('(?<=a)b')" }]))
    assert.equal(res.status, 422, res.text)
    const cause = res.body.details.causes.find((c: { field: string }) => c.field.endsWith('x-kubernetes-validations[0].rule'))
    assert.ok(cause, res.text)
    assert.match(cause.message, /: compilation failed: ERROR: <input>:1:19: invalid matches argument\n \| .*\n \| \.{18}\^$/)
    assert.equal((await api.get(`${CRDS}/widgets.${GROUP}`)).status, 404)
  })

  describe('searches priced by the program they run', () => {
    /** Compiles to 1,502 instructions from 17 characters: each search of a short string is a backtracking of some 250,000 steps. */
    const LARGE_PROGRAM = '(?:a?){500}a{500}'
    const CANCELLED = 'operation cancelled: actual cost limit exceeded'
    const SEARCHES = `/apis/${GROUP}/v1/namespaces/default/searches`

    /** Searches whose rule searches `spec.name` once per pair of `spec.times` items, with `pattern`. */
    function searchDefinition(pattern: string) {
      const spec = {
        type: 'object',
        properties: {
          name: { type: 'string', maxLength: 170 },
          times: { type: 'array', maxItems: 90, items: { type: 'integer' } },
        },
        'x-kubernetes-validations': [{ rule: `self.times.all(i, self.times.all(j, self.name.find('${pattern}') != 'x'))`, message: 'searched' }],
      }
      return {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `searches.${GROUP}` },
        spec: {
          group: GROUP,
          scope: 'Namespaced',
          names: { plural: 'searches', singular: 'search', kind: 'Search' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
        },
      }
    }

    const search = (name: string, times: number) => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'Search',
      metadata: { name },
      spec: { name: 'a'.repeat(170), times: Array.from({ length: times }, (_, i) => i) },
    })

    it('cancels a rule searching a short string thousands of times with a program of a thousand instructions, with 422, and stores nothing', async () => {
      // Upstream's price of each search (from the pattern's 17 characters) lets 8,100 of them run: 31 s of this thread.
      const api = await startServer()
      await installDefinition(api, searchDefinition(LARGE_PROGRAM))
      const [res, other] = await Promise.all([api.post(SEARCHES, search('many', 90)), api.get('/api/v1/namespaces/default/configmaps')])
      assert.equal(other.status, 200, other.text)
      assert.equal(res.status, 422, res.text)
      assert.deepEqual(
        res.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`),
        [`spec: Invalid value: "object": '${CANCELLED}': no further validation rules will be run due to call cost exceeds limit for rule: searched`],
      )
      assert.equal((await api.get(`${SEARCHES}/many`)).status, 404)
      // A few searches of the same program stay within the limit.
      assert.equal((await api.post(SEARCHES, search('few', 5))).status, 201)
    })

    it('lets a pattern of ordinary size search as often as upstream lets it', async () => {
      const api = await startServer()
      await installDefinition(api, searchDefinition('[a-z]+[0-9]*'))
      const res = await api.post(SEARCHES, search('many', 90))
      assert.equal(res.status, 201, res.text)
    })
  })
})
