import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseTokenFile, type TokenFileWarning } from '../../../core/config/token-file.js'

describe('parseTokenFile', () => {
  it('reads token, user, uid and quoted groups', () => {
    const tokens = parseTokenFile('s3cret,alice,1001,"dev,ops"\nt0ken,bob,1002\n', 'tokens.csv')
    assert.deepEqual(tokens, [
      { token: 's3cret', user: { username: 'alice', uid: '1001', groups: ['dev', 'ops'] } },
      { token: 't0ken', user: { username: 'bob', uid: '1002', groups: [] } },
    ])
  })

  it('skips blank lines and accepts CRLF and a trailing line without newline', () => {
    const tokens = parseTokenFile('\r\na,u1,1\r\n\r\nb,u2,2,g', 'f')
    assert.deepEqual(
      tokens.map((t) => [t.token, t.user.username, t.user.groups]),
      [
        ['a', 'u1', []],
        ['b', 'u2', ['g']],
      ],
    )
  })

  it('treats # as data, as upstream does (no comments)', () => {
    const tokens = parseTokenFile('#tok,user,uid\n', 'f')
    assert.equal(tokens[0]?.token, '#tok')
  })

  it('unescapes doubled quotes and quoted fields spanning lines', () => {
    const tokens = parseTokenFile('"a""b",user,uid,"g1,\ng2"\nx,y,z\n', 'f')
    assert.equal(tokens[0]?.token, 'a"b')
    assert.deepEqual(tokens[0]?.user.groups, ['g1', '\ng2'])
    assert.equal(tokens[1]?.token, 'x')
  })

  it('omits an empty uid and keeps empty group names, as upstream splits the groups column', () => {
    const [t] = parseTokenFile('tok,user,,"a,,b"\n', 'f')
    assert.deepEqual(t?.user, { username: 'user', groups: ['a', '', 'b'] })
    const [empty] = parseTokenFile('tok,user,1,\n', 'f')
    assert.deepEqual(empty?.user.groups, [''])
  })

  it('drops a carriage return at the very end of the file, as Go does', () => {
    const [t] = parseTokenFile('tok,user,1,ops\r', 'f')
    assert.deepEqual(t?.user.groups, ['ops'])
  })

  it('reads a line of spaces as a record, not as a blank line', () => {
    assert.throws(() => parseTokenFile('a,b,c\n   \n', 'tokens.csv'), /^TokenFileError: tokens\.csv: line 2: must have at least 3 columns \(token, user name, user uid\), found 1$/)
  })

  it('names the file and line of a record with too few columns', () => {
    assert.throws(
      () => parseTokenFile('a,b,c\n\nonly,two\n', 'tokens.csv'),
      /^TokenFileError: tokens\.csv: line 3: must have at least 3 columns \(token, user name, user uid\), found 2$/,
    )
  })

  it('rejects a bare quote and an unterminated quote with the line', () => {
    assert.throws(() => parseTokenFile('a,b,c\nx"y,u,1\n', 'f'), /f: line 2: bare " in non-quoted-field/)
    assert.throws(() => parseTokenFile('a,b,c\n"x,u,1\n', 'f'), /f: line 2: extraneous or missing " in quoted-field/)
    assert.throws(() => parseTokenFile('"x"y,u,1\n', 'f'), /f: line 1: extraneous or missing "/)
  })

  it('skips empty tokens and keeps the last of duplicates, with warnings', () => {
    const warnings: TokenFileWarning[] = []
    const tokens = parseTokenFile(',u,1\na,first,1\nb,other,2\na,second,3\n', 'f', (w) => warnings.push(w))
    assert.deepEqual(
      tokens.map((t) => [t.token, t.user.username]),
      [
        ['b', 'other'],
        ['a', 'second'],
      ],
    )
    assert.deepEqual(
      warnings.map((w) => w.line),
      [1, 4],
    )
  })

  it('accepts an empty file', () => {
    assert.deepEqual(parseTokenFile('', 'f'), [])
  })
})
