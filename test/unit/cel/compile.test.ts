import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type CelResultType, compile, selectsField } from '../../../core/cel/compile.js'
import type { CelVariable } from '../../../core/cel/environments.js'

function reason(variable: CelVariable, expression: string, expected: CelResultType[]): string {
  const result = compile(variable, expression, expected)
  assert.ok('reason' in result, `${expression} compiled`)
  return result.reason
}

function type(variable: CelVariable, expression: string, expected: CelResultType[]): string {
  const result = compile(variable, expression, expected)
  assert.ok('program' in result, `${expression}: ${'reason' in result ? result.reason : ''}`)
  return result.program.type
}

describe('compiling CEL expressions from config files', () => {
  it('reports a syntax error with its line and column', () => {
    assert.equal(reason('claims', 'claims.sub +', ['string']), 'compilation failed: ERROR: <input>:1:13: Unexpected token: EOF\n | claims.sub +\n | ............^')
    assert.equal(
      reason('claims', 'claims.a &&\n  claims.b ==', ['bool']),
      'compilation failed: ERROR: <input>:2:14: Unexpected token: EOF\n |   claims.b ==\n | .............^',
    )
  })

  it("refuses the library's methods of bytes that no Kubernetes environment declares, as cel-go refuses an undeclared function", () => {
    for (const [call, column] of [["b'a'.json()", 10], ["b'a'.hex()", 9], ["b'a'.base64()", 12], ["b'a'.string()", 12], ["b'a'.at(0)", 8]] as const) {
      const name = call.slice(5, call.indexOf('('))
      assert.equal(
        reason('claims', `${call} != null`, ['bool']),
        `compilation failed: ERROR: <input>:1:${column}: undeclared reference to '${name}' (in container '')\n | ${call} != null\n | ${'.'.repeat(column - 1)}^`,
      )
    }
    assert.equal(type('claims', "string(b'a') == 'a'", ['bool']), 'bool')
  })

  it('type-checks against the variable of the use site only', () => {
    assert.equal(reason('claims', 'user.username == "a"', ['bool']), `compilation failed: ERROR: <input>:1:1: undeclared reference to 'user' (in container '')\n | user.username == "a"\n | ^`)
    assert.equal(reason('user', 'claims.sub == "a"', ['bool']), `compilation failed: ERROR: <input>:1:1: undeclared reference to 'claims' (in container '')\n | claims.sub == "a"\n | ^`)
    assert.equal(reason('request', 'user.username == "a"', ['bool']), `compilation failed: ERROR: <input>:1:1: undeclared reference to 'user' (in container '')\n | user.username == "a"\n | ^`)
  })

  it('knows the fields of user and request, so a misspelt field fails at load time', () => {
    assert.equal(reason('user', "user.usrname.startsWith('system:')", ['bool']), "compilation failed: ERROR: <input>:1:5: undefined field 'usrname'\n | user.usrname.startsWith('system:')\n | ....^")
    assert.equal(
      reason('request', "request.resourceAttributes.namespce == 'a'", ['bool']),
      "compilation failed: ERROR: <input>:1:27: undefined field 'namespce'\n | request.resourceAttributes.namespce == 'a'\n | ..........................^",
    )
    assert.equal(reason('user', 'user.username + 1', ['string']), "compilation failed: ERROR: <input>:1:15: found no matching overload for '_+_' applied to '(string, int)'\n | user.username + 1\n | ..............^")
  })

  it('demands an exact bool where a bool is expected, as upstream does', () => {
    assert.equal(reason('claims', 'claims.email_verified', ['bool']), 'must evaluate to bool')
    assert.equal(type('claims', 'claims.email_verified == true', ['bool']), 'bool')
    assert.equal(type('claims', 'claims.?email_verified.orValue(true) == true', ['bool']), 'bool')
  })

  it('accepts a dyn claim where a string or list is expected, and refuses a wrong static type', () => {
    assert.equal(type('claims', 'claims.sub', ['string']), 'dyn')
    assert.equal(type('claims', "claims.groups.map(g, 'oidc:' + g)", ['string', 'list<string>']), 'list<string>')
    assert.equal(type('claims', '[claims.a, claims.b]', ['string', 'list<string>']), 'list')
    assert.equal(type('claims', "[claims.a, 'b']", ['string', 'list<string>']), 'list')
    const wrong = compile('claims', 'size(claims.groups)', ['string'])
    assert.deepEqual(wrong, { reason: 'must evaluate to string', got: 'int' })
    assert.equal(reason('claims', '[1, 2]', ['string', 'list<string>']), 'must evaluate to one of [string list(string)]')
  })

  it('declares the SubjectAccessReview fields match conditions use', () => {
    for (const e of [
      "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'",
      "request.resourceAttributes.verb in ['get', 'list'] && request.resourceAttributes.subresource == ''",
      "has(request.nonResourceAttributes) && request.nonResourceAttributes.path.startsWith('/healthz')",
      "'system:masters' in request.groups || request.user == 'admin' || request.uid == '1'",
      "request.extra.exists(k, k == 'scopes')",
      "request.resourceAttributes.?fieldSelector.rawSelector.orValue('') == ''",
      "request.resourceAttributes.labelSelector.requirements.exists(r, r.key == 'app' && r.operator == 'In' && 'web' in r.values)",
    ]) {
      assert.equal(type('request', e, ['bool']), 'bool', e)
    }
  })

  it('offers the cel-go string extensions at upstream version 2 and Kubernetes sets that the library lacks', () => {
    for (const e of [
      "claims.sub.replace('-', '_')",
      "claims.sub.replace('-', '_', 1)",
      "'abc'.charAt(1)",
      "'%s-%d'.format([claims.sub, 3])",
      'strings.quote(claims.sub)',
      'string(int(timestamp(claims.exp)))',
      "claims.email.lowerAscii().split('@')[0]",
    ]) {
      assert.equal(type('claims', e, ['string']), 'string', e)
    }
    assert.equal(type('claims', "sets.equivalent(claims.aud, ['a', 'b']) && sets.contains(claims.aud, ['a'])", ['bool']), 'bool')
    assert.equal(type('claims', "sets.intersects(claims.roles, ['admin'])", ['bool']), 'bool')
    // reverse() came with version 3 of the extension, which Kubernetes does not use.
    assert.equal(
      reason('claims', "'abc'.reverse()", ['string']),
      "compilation failed: ERROR: <input>:1:14: undeclared reference to 'reverse' (in container '')\n | 'abc'.reverse()\n | .............^",
    )
  })
})

describe('reading which claims an expression uses', () => {
  const ast = (e: string) => {
    const asBool = compile('claims', e, ['bool'])
    const result = 'program' in asBool ? asBool : compile('claims', e, ['string', 'list<string>'])
    assert.ok('program' in result, e)
    return result.program.ast
  }

  it('finds claims.email as a field selection, an optional selection or inside has() and macros', () => {
    for (const e of [
      'claims.email',
      "claims.?email.orValue('')",
      "has(claims.email) ? claims.sub : ''",
      "claims.groups.map(g, claims.email + g)",
      "[claims.email]",
      "{'a': claims.email}['a']",
    ]) {
      assert.equal(selectsField(ast(e), 'claims', 'email'), true, e)
    }
  })

  it('does not count a string that mentions it, another field, or another variable', () => {
    for (const e of ["'claims.email'", 'claims.email_verified == true', "claims['email']", 'claims.x.map(c, c.email)']) {
      assert.equal(selectsField(ast(e), 'claims', 'email'), false, e)
    }
  })
})
