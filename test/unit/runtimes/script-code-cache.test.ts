/** The bin's classic script with a V8 code cache beside it (runtimes/node/daemon/script-code-cache.ts). */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { codeCacheFileOf, type Evaluation, runWithCodeCache, SCRIPT_WRAPPER_END, SCRIPT_WRAPPER_START } from '../../../runtimes/node/daemon/script-code-cache.js'

interface Exports {
  answer(): string
  url: string
  strict: boolean
}

const SOURCE = `${SCRIPT_WRAPPER_START}"use strict";
exports.answer = () => ['forty', 'two'].join(' ');
exports.url = __scriptFileUrl;
exports.strict = (function () { return this === undefined })();
${SCRIPT_WRAPPER_END}
`

describe('a script run with a code cache', () => {
  let dir: string
  let file: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'script-code-cache-'))
    file = join(dir, 'bundle.cjs')
    await writeFile(file, SOURCE)
  })
  after(() => rm(dir, { recursive: true, force: true }))

  it('reads a script beyond ASCII as UTF-8', async () => {
    const utf8 = join(dir, 'utf8.cjs')
    await writeFile(utf8, `${SCRIPT_WRAPPER_START}exports.answer = () => 'gr\u00fc\u00df \u{1f511}';\n${SCRIPT_WRAPPER_END}\n`)
    assert.equal(runWithCodeCache<Exports>(utf8)!.exports.answer(), 'gr\u00fc\u00df \u{1f511}')
  })

  it('is not there: no script', () => {
    assert.equal(runWithCodeCache(join(dir, 'missing.cjs')), undefined)
  })

  it('runs strict, with its own file URL, and writes a cache the next run uses', async () => {
    const first = runWithCodeCache<Exports>(file)!
    assert.equal(first.exports.answer(), 'forty two')
    assert.equal(first.exports.url, `file://${file}`)
    assert.equal(first.exports.strict, true)
    assert.equal(first.usedCache, false)
    first.takeCodeCache()
    first.saveCodeCache()
    assert.ok((await stat(codeCacheFileOf(file))).size > 0)

    const second = runWithCodeCache<Exports>(file)!
    assert.equal(second.usedCache, true)
    assert.equal(second.exports.answer(), 'forty two')
  })

  it('evaluates within the evaluation it is given, after the compile: a V8 flag changed there costs no cache', async () => {
    await writeFile(file, `// a build evaluated under another flag\n${SOURCE}`)
    const order: string[] = []
    const underAnotherFlag: Evaluation = (evaluate) => {
      // V8 checks a cache against its flags; the daemon's evaluation on etcd changes one the same way.
      setFlagsFromString('--semi-space-growth-factor=4')
      try {
        order.push('evaluation begins')
        return evaluate()
      } finally {
        setFlagsFromString('--semi-space-growth-factor=2')
        order.push('evaluation ends')
      }
    }
    const first = runWithCodeCache<Exports>(file, underAnotherFlag)!
    assert.equal(first.exports.answer(), 'forty two')
    first.takeCodeCache()
    first.saveCodeCache()
    const second = runWithCodeCache<Exports>(file, underAnotherFlag)!
    assert.equal(second.usedCache, true)
    assert.deepEqual(order, ['evaluation begins', 'evaluation ends', 'evaluation begins', 'evaluation ends'])
  })

  it('takes no code when it used a cache, unless asked to always', async () => {
    await writeFile(file, `// a build whose cache is taken again\n${SOURCE}`)
    const first = runWithCodeCache<Exports>(file)!
    first.takeCodeCache()
    first.saveCodeCache()
    const second = runWithCodeCache<Exports>(file)!
    assert.equal(second.usedCache, true)
    await rm(codeCacheFileOf(file))
    second.takeCodeCache()
    second.saveCodeCache()
    assert.equal(await stat(codeCacheFileOf(file)).catch(() => undefined), undefined, 'a used cache was taken again')
    second.takeCodeCache(true)
    second.saveCodeCache()
    assert.equal(runWithCodeCache<Exports>(file)!.usedCache, true)
  })

  it('runs as without a cache when the cache is not one, and replaces it', async () => {
    // Another source: V8 keeps what this process compiled, and would not read the cache for the same one.
    await writeFile(file, `// another build\n${SOURCE}`)
    await writeFile(codeCacheFileOf(file), 'not a code cache')
    const run = runWithCodeCache<Exports>(file)!
    assert.equal(run.usedCache, false)
    assert.equal(run.exports.answer(), 'forty two')
    run.takeCodeCache()
    run.saveCodeCache()
    assert.notEqual(await readFile(codeCacheFileOf(file), 'utf8').catch(() => ''), 'not a code cache')
    assert.equal(runWithCodeCache<Exports>(file)!.usedCache, true)
  })

  it('keeps no cache, and throws nothing, where it cannot write one', async () => {
    // A directory where the cache would go: no user, root included, can put the file there.
    await rm(codeCacheFileOf(file), { force: true })
    await mkdir(codeCacheFileOf(file))
    try {
      const run = runWithCodeCache<Exports>(file)!
      assert.equal(run.usedCache, false)
      assert.equal(run.exports.answer(), 'forty two')
      run.takeCodeCache()
      assert.doesNotThrow(() => run.saveCodeCache())
      assert.ok((await stat(codeCacheFileOf(file))).isDirectory())
      assert.deepEqual((await readdir(dir)).filter((name) => name.startsWith(`${basename(codeCacheFileOf(file))}.`)), [], 'no partial cache left behind')
    } finally {
      await rm(codeCacheFileOf(file), { recursive: true, force: true })
    }
  })
})
