/** Start-up templates beside a script (runtimes/node/daemon/startup-template-files.ts): what is read, and what is taken for none. */
import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { startupTemplatesBeside, writableByThisUserAlone } from '../../../runtimes/node/daemon/startup-template-files.js'

const dir = mkdtempSync(join(tmpdir(), 'template-files-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function script(name: string): string {
  const file = join(dir, name)
  writeFileSync(file, '// a script\n')
  return file
}

const templateOf = (scriptFile: string): string => join(dir, readdirSync(dir).find((f) => f.startsWith(`${scriptFile.split('/').pop()}.startup-`))!)

describe('start-up templates beside a script', () => {
  it('reads back what it wrote, readable and writable by this user alone', () => {
    const files = startupTemplatesBeside(script('a.cjs'))
    files.write('settings', '{"kept":1}')
    assert.equal(files.read('settings'), '{"kept":1}')
    assert.equal(files.read('other settings'), undefined)
    assert.equal(statSync(templateOf(join(dir, 'a.cjs'))).mode & 0o777, 0o600)
  })

  it('takes a file others may write for none: its objects would go to the store unchecked', () => {
    const files = startupTemplatesBeside(script('b.cjs'))
    files.write('settings', '{"kept":1}')
    const file = templateOf(join(dir, 'b.cjs'))
    for (const mode of [0o620, 0o602, 0o666]) {
      chmodSync(file, mode)
      assert.equal(files.read('settings'), undefined, mode.toString(8))
    }
    chmodSync(file, 0o644)
    assert.equal(files.read('settings'), '{"kept":1}', 'readable by others is no risk to this start')
  })

  it("takes another user's file for none", () => {
    const me = process.getuid?.() ?? 0
    assert.equal(writableByThisUserAlone({ uid: me, mode: 0o100600 }), true)
    assert.equal(writableByThisUserAlone({ uid: me + 1, mode: 0o100600 }), false)
    assert.equal(writableByThisUserAlone({ uid: me, mode: 0o100660 }), false)
  })

  it('keeps the templates of a script apart from those of the script it replaced', () => {
    const file = script('d.cjs')
    startupTemplatesBeside(file).write('settings', '{"kept":1}')
    writeFileSync(file, '// a new build of the script, longer\n')
    assert.equal(startupTemplatesBeside(file).read('settings'), undefined)
  })
})
