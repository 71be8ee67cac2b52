/**
 * A CRD's `pattern` over a list of long strings: each match runs in slices
 * and the matches of one object share one bound on their work, so a create
 * that would hold the thread for many seconds is refused 422 while other
 * clients are served, and nothing is stored.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { installDefinition } from './crd-fixtures.js'
import { besideAGet, startServer } from './harness.js'
import { countTurns } from '../helpers/event-loop-turns.js'
import { RegexWorkBudget, userRegexTestInSteps } from '../../core/regex/re2.js'
import { runAtOnce } from '../../core/machinery/time-slice.js'

const GROUP = 'patterns.example.com'
const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`
/** Some 300 instructions, nearly all live at every character of a random a/b text: linear, but 300 steps a character. */
const PATTERN = '^[ab]*a[ab]{300}$'

function widgetDefinition() {
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
              properties: { spec: { type: 'object', properties: { many: { type: 'array', items: { type: 'string', pattern: PATTERN } } } } },
            },
          },
        },
      ],
    },
  }
}

/** A text of random a and b that the pattern cannot match (it ends in 301 b), read to its end. */
function hostileValue(length: number, seed: number): string {
  let state = seed
  let out = ''
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff
    out += state & 1024 ? 'a' : 'b'
  }
  return out + 'b'.repeat(301)
}

describe("a CRD pattern's work is sliced and bounded per object", { timeout: 120_000 }, () => {
  it('refuses a list of long values with 422, answers a GET sent beside it first, and stores nothing', async () => {
    const api = await startServer()
    await installDefinition(api, widgetDefinition())
    const many = Array.from({ length: 60 }, (_, i) => hostileValue(40_000, i + 1))
    const body = { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'hostile' }, spec: { many } }
    const turns = countTurns()
    const { answer, order } = await besideAGet(api, () => api.post(WIDGETS, body))
    // Held in one piece, the matches let the event loop turn only around them; in slices, hundreds of times.
    const turned = turns.stop()
    assert.ok(turned > 200, String(turned))
    assert.equal(answer.status, 422, answer.text)
    assert.deepEqual(order, ['get', 'request'])
    const causes = (answer.body.details.causes as { field: string; message: string }[]).map((c) => c.message)
    // The first values are matched (and do not match); once the object's budget is spent the rest are refused as too costly.
    assert.match(causes[0]!, /should match '\^\[ab\]\*a\[ab\]\{300\}\$'/)
    assert.ok(
      causes.some((m) => /in body could not be matched against '\^\[ab\]\*a\[ab\]\{300\}\$': regular expression of \d+ instructions is too costly to match against 40301 characters/.test(m)),
      causes.join('\n'),
    )
    assert.equal((await api.get(`${WIDGETS}/hostile`)).status, 404)
  })

  it('still accepts a matching list and refuses a value that does not match', async () => {
    const api = await startServer()
    await installDefinition(api, widgetDefinition())
    const good = `${'ab'.repeat(1000)}a${'b'.repeat(300)}`
    const created = await api.post(WIDGETS, { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'good' }, spec: { many: [good, good] } })
    assert.equal(created.status, 201, created.text)
    const refused = await api.post(WIDGETS, { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'short' }, spec: { many: ['ab'] } })
    assert.equal(refused.status, 422, refused.text)
    assert.match(refused.body.message, /spec\.many\[0\] in body should match/)
  })

  it('checks in every few thousand steps of one long match, and stops a request past its budget', () => {
    let checkpoints = 0
    const budget = new RegexWorkBudget()
    const work = userRegexTestInSteps(PATTERN, hostileValue(40_000, 7), budget)
    let step = work.next()
    for (; !step.done; step = work.next()) checkpoints++
    assert.equal(step.value, false)
    // Some 300 threads a character over 40,000 characters, a checkpoint every 4,096 of them.
    assert.ok(checkpoints > 2000, String(checkpoints))
    const spent = new RegexWorkBudget(1_000_000)
    assert.throws(() => runAtOnce(userRegexTestInSteps(PATTERN, hostileValue(40_000, 8), spent)), /too costly to match against 40301 characters/)
  })
})
