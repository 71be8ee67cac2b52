/**
 * Imports point downward (docs/architecture.md). Inside core, the shared
 * machinery (Status errors, the object and user types, field errors, names,
 * label selectors, Go durations, time slices and bounds) imports nothing
 * above it, and the wire encodings, the type tables, validation and storage
 * build only on what lies below them. Outside, core knows no runtime; the
 * Node daemon, written against the node:* library all three runtimes share,
 * knows neither Bun nor Deno; Bun and Deno know nothing of each other and
 * reach the daemon only through its boot seam (runDaemon and the
 * DaemonRuntime port they fill in).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { it } from 'node:test'

const ROOT = join(import.meta.dirname, '..', '..')

/** What each folder may not import, as folders relative to the repository; `except` lists files that are allowed. */
const RULES: { from: string; never: string; except?: string[] }[] = [
  { from: 'core', never: 'runtimes' },
  { from: 'runtimes/node', never: 'runtimes/bun' },
  { from: 'runtimes/node', never: 'runtimes/deno' },
  { from: 'runtimes/bun', never: 'runtimes/deno' },
  { from: 'runtimes/deno', never: 'runtimes/bun' },
  // The Node adapter (listener, TLS, HTTP/2) is as thin as hono's: it knows nothing of the daemon that boots it or its stores.
  { from: 'runtimes/node/adapter', never: 'runtimes/node/daemon' },
  { from: 'runtimes/node/adapter', never: 'runtimes/node/storage' },
  { from: 'runtimes/bun', never: 'runtimes/node', except: ['runtimes/node/daemon/daemon.ts', 'runtimes/node/daemon/daemon-runtime.ts'] },
  { from: 'runtimes/deno', never: 'runtimes/node', except: ['runtimes/node/daemon/daemon.ts', 'runtimes/node/daemon/daemon-runtime.ts'] },
  // The catalogue lies below the registry that serves it.
  { from: 'core/resources', never: 'core/registry' },
  // The registry is storage logic: the HTTP endpoints over it, and what they call (tokens, node agents), sit above it.
  { from: 'core/registry', never: 'core/endpoints' },
  { from: 'core/registry', never: 'core/http' },
  { from: 'core/registry', never: 'core/nodeagent' },
  { from: 'core/registry', never: 'core/authn' },
  // The client and informers read and write through ports; they know nothing of what serves them.
  { from: 'core/client', never: 'core/registry' },
  // Controllers read through informers or the stored objects they are handed, and write through the client or those: never the registry.
  { from: 'core/controllers', never: 'core/registry' },
  // Workload controllers read through informers and write through the client, never storage.
  { from: 'core/controllers/workloads', never: 'core/registry' },
  { from: 'core/controllers/workloads', never: 'core/storage' },
  // The simulated nodes, scheduler and kubelet are clients too.
  { from: 'core/simulation', never: 'core/registry' },
  { from: 'core/simulation', never: 'core/storage' },
]

/** What the low folders of core may import: their own files and the folders (or files) listed. */
const ONLY: { from: string; may: string[] }[] = [
  { from: 'core/machinery', may: [] },
  { from: 'core/logging', may: [] },
  { from: 'core/lifecycle', may: ['core/machinery', 'core/logging'] },
  { from: 'core/encoding', may: ['core/machinery', 'core/resources/schema'] },
  { from: 'core/resources/schema', may: ['core/machinery', 'core/encoding'] },
  // Matching in steps yields at the checkpoints every long computation here shares (time-slice.ts imports nothing).
  { from: 'core/regex', may: ['core/machinery/time-slice.ts'] },
  { from: 'core/crd-schema', may: ['core/machinery', 'core/cel', 'core/regex'] },
  { from: 'core/validation', may: ['core/machinery', 'core/regex'] },
  { from: 'core/client', may: ['core/machinery', 'core/logging', 'core/storage/interface.ts'] },
  {
    from: 'core/storage',
    may: ['core/machinery', 'core/encoding', 'core/lifecycle', 'core/logging', 'core/tracing', 'core/metrics/metrics.ts', 'core/metrics/definitions.ts'],
  },
]

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

/** The repository-relative `.ts` paths a file imports by relative specifier. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) =>
    relative(ROOT, resolve(dirname(file), m[1]!)).replace(/\.js$/, '.ts'),
  )
}

const inside = (path: string, folder: string): boolean => path === folder || path.startsWith(`${folder}/`)

it('imports go downward: core knows no runtime, and runtimes reach each other only through the boot seam', () => {
  const offences: string[] = []
  for (const rule of RULES) {
    const files = sourceFiles(join(ROOT, rule.from))
    assert.ok(files.length > 0, `found the sources of ${rule.from}`)
    for (const file of files) {
      for (const target of relativeImports(file)) {
        if (inside(target, rule.never) && !rule.except?.includes(target)) offences.push(`${relative(ROOT, file)} imports ${target}`)
      }
    }
  }
  assert.deepEqual(offences, [])
})

it('the low folders of core build only on what lies below them', () => {
  const offences: string[] = []
  for (const rule of ONLY) {
    const files = sourceFiles(join(ROOT, rule.from))
    assert.ok(files.length > 0, `found the sources of ${rule.from}`)
    for (const file of files) {
      for (const target of relativeImports(file)) {
        if (inside(target, rule.from) || rule.may.some((allowed) => inside(target, allowed))) continue
        offences.push(`${relative(ROOT, file)} imports ${target}`)
      }
    }
  }
  assert.deepEqual(offences, [])
})

it('no two folders of core import each other, by value or by type', () => {
  const core = join(ROOT, 'core')
  const folderOf = (path: string): string | undefined => {
    const parts = relative(core, join(ROOT, path)).split('/')
    return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined
  }
  const imports = new Map<string, Set<string>>()
  for (const file of sourceFiles(core)) {
    const from = folderOf(relative(ROOT, file))
    if (!from) continue
    for (const target of relativeImports(file)) {
      const to = folderOf(target)
      if (!to || to === from) continue
      if (!imports.has(from)) imports.set(from, new Set())
      imports.get(from)!.add(to)
    }
  }
  const pairs: string[] = []
  for (const [a, targets] of imports) for (const b of targets) if (a < b && imports.get(b)?.has(a)) pairs.push(`${a} <-> ${b}`)
  assert.deepEqual(pairs, [])
})

/** The Node runtime's top folder holds its entry points only; what they run lives in adapter/, daemon/ and storage/. */
const NODE_ENTRY_POINTS = ['daemon-script.ts', 'index.ts', 'library-script.ts', 'library.ts', 'main.ts', 'yaml-worker.ts']

it('the top of runtimes/node holds only its entry points', () => {
  const top = readdirSync(join(ROOT, 'runtimes', 'node'), { withFileTypes: true })
  const files = top.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => e.name)
  assert.deepEqual(files.sort(), NODE_ENTRY_POINTS)
})

/** What may import the registry: the HTTP endpoints over it and the server's wiring. */
const REGISTRY_IMPORTERS = ['core/registry', 'core/endpoints', 'core/wiring', 'core/server.ts']

it('no folder of core imports the registry but the endpoints and the wiring', () => {
  const importers = new Set<string>()
  for (const file of sourceFiles(join(ROOT, 'core'))) {
    const path = relative(ROOT, file)
    if (REGISTRY_IMPORTERS.some((allowed) => inside(path, allowed))) continue
    if (relativeImports(file).some((target) => inside(target, 'core/registry'))) importers.add(path)
  }
  assert.deepEqual([...importers].sort(), [])
})
