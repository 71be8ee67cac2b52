/**
 * core/ runs on every runtime: it may use Web APIs and its chosen packages,
 * never node:* modules or a runtime's globals (docs/architecture.md).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { it } from 'node:test'

const CORE = join(import.meta.dirname, '..', '..', 'core')
const NODE_BUILTINS = /^(node:|fs$|path$|http$|https$|http2$|net$|tls$|crypto$|os$|child_process$|stream$|buffer$|url$|util$|events$|zlib$)/
const RUNTIME_GLOBALS = /\b(Deno\.|Bun\.|process\.|Buffer\.|require\()/

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

it('core imports no runtime module and touches no runtime global', () => {
  const offences: string[] = []
  const files = sourceFiles(CORE)
  assert.ok(files.length > 20, 'found the core sources')
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      if (NODE_BUILTINS.test(m[1] ?? '')) offences.push(`${file}: imports ${m[1]}`)
    }
    const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
    const global = RUNTIME_GLOBALS.exec(code)
    if (global) offences.push(`${file}: uses ${global[1]}`)
  }
  assert.deepEqual(offences, [])
})
