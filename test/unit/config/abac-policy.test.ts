import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type AbacPolicyWarning, loadAbacPolicy } from '../../../core/config/abac-policy.js'
import { ConfigFileError, problemText } from '../../../core/config/decode.js'

const v1beta1 = (spec: Record<string, unknown>): string =>
  JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec })

function problems(text: string): string[] {
  try {
    loadAbacPolicy(text, 'policy.jsonl')
  } catch (err) {
    assert.ok(err instanceof ConfigFileError, String(err))
    return err.problems.map(problemText)
  }
  return []
}

const everything = { apiGroup: '*', resource: '*', namespace: '*' }

describe('loadAbacPolicy', () => {
  it('reads one v1beta1 rule per line, skipping blank and # comment lines', () => {
    const text = [
      '# the admin may do anything',
      v1beta1({ user: 'admin', ...everything, nonResourcePath: '*' }),
      '',
      '   # an indented comment',
      v1beta1({ user: 'alice', namespace: 'projectCaribou', resource: 'pods', apiGroup: '', readonly: true }),
      '',
    ].join('\n')
    assert.deepEqual(loadAbacPolicy(text, 'policy.jsonl'), [
      { line: 2, user: 'admin', group: '', readonly: false, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' },
      { line: 5, user: 'alice', group: '', readonly: true, apiGroup: '', resource: 'pods', namespace: 'projectCaribou', nonResourcePath: '' },
    ])
  })

  it('turns a * user or group into every authenticated user, as upstream converts v1beta1', () => {
    const [rule] = loadAbacPolicy(v1beta1({ user: '*', nonResourcePath: '/version' }), 'p')
    assert.equal(rule?.user, '')
    assert.equal(rule?.group, 'system:authenticated')
  })

  it('converts the unversioned form: empty fields mean everything, and every API group', () => {
    const warnings: AbacPolicyWarning[] = []
    const text = '{"user":"bob","readonly":true}\n{"group":"dev","namespace":"dev","resource":"pods"}\n{}\r\n'
    assert.deepEqual(loadAbacPolicy(text, 'p', (w) => warnings.push(w)), [
      { line: 1, user: 'bob', group: '', readonly: true, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' },
      { line: 2, user: '', group: 'dev', readonly: false, apiGroup: '*', resource: 'pods', namespace: 'dev', nonResourcePath: '' },
      { line: 3, user: '', group: 'system:authenticated', readonly: false, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' },
    ])
    assert.deepEqual(
      warnings.map((w) => w.line),
      [1],
    )
    assert.match(warnings[0]?.message ?? '', /unversioned rules/)
  })

  it('ignores unknown fields as upstream does, with a warning naming each one', () => {
    const warnings: AbacPolicyWarning[] = []
    const rules = loadAbacPolicy(v1beta1({ user: 'alice', namespce: 'dev', ...everything }), 'p', (w) => warnings.push(w))
    assert.equal(rules.length, 1)
    assert.deepEqual(warnings, [{ line: 1, message: 'unknown field "spec.namespce" ignored' }])
  })

  it('names the line, the line itself and the reason of every bad line at once', () => {
    const text = [
      v1beta1({ user: 'alice', readonly: 'yes' }),
      '{"user": "bob",',
      '["not", "an", "object"]',
      '{"apiVersion": "v1", "kind": "Pod"}',
      v1beta1({ user: 'fine' }),
    ].join('\n')
    assert.deepEqual(problems(text), [
      `line 1: ${v1beta1({ user: 'alice', readonly: 'yes' })}: spec.readonly: Invalid value: "yes": must be a boolean`,
      'line 2: {"user": "bob",: cannot parse as JSON: Flow map must end with a }',
      'line 3: ["not", "an", "object"]: must be one JSON object',
      'line 4: {"apiVersion": "v1", "kind": "Pod"}: apiVersion and kind must be "abac.authorization.kubernetes.io/v1beta1" and "Policy", or both left out for the unversioned form',
    ])
  })

  it('accepts the versioned v0 form and an empty file', () => {
    const [rule] = loadAbacPolicy('{"apiVersion":"abac.authorization.kubernetes.io/v0","kind":"Policy","user":"carol"}', 'p')
    assert.equal(rule?.user, 'carol')
    assert.deepEqual(loadAbacPolicy('', 'p'), [])
  })

  it('refuses a line longer than upstream reads', () => {
    const long = v1beta1({ user: 'x'.repeat(70_000) })
    assert.deepEqual(problems(long), ['line 1: longer than 65535 bytes (bufio.Scanner: token too long)'])
  })
})
