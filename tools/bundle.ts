/**
 * Build step after `tsc`: rewrites the package's entry points in dist/ as
 * esbuild bundles, so `import 'kube-apiserver-ts'` and the `apiserver` bin
 * read a handful of files instead of some six hundred modules (resolving,
 * reading and linking each one was about a third of the import's CPU time).
 *
 *   node --import tsx tools/bundle.ts      (run by `npm run build`)
 *
 * - The small pure-JavaScript dependencies that every start loads are copied
 *   into the bundle (INLINED below): loading them from node_modules cost
 *   another ~250 files, and yaml and @opentelemetry/api resolve to their
 *   CommonJS builds under Node, the slowest to load. Their ES module builds
 *   are bundled instead. They stay in package.json for their types.
 * - Every other dependency stays external: CommonJS or native ones (libsql,
 *   pino, prom-client, gRPC), and those loaded only when a flag asks.
 * - The three entry points are bundled together with code splitting, so the
 *   package's `.` and `./node` exports share one copy of every module (one
 *   StatusError class, one MemoryStorage) and what the code imports lazily
 *   (`import()`: the etcd store, tracing, KMS) stays in its own chunk.
 * - Chunks live beside the Node entry points, in dist/runtimes/node/: the
 *   modules there find their .proto files relative to `import.meta.url`.
 * - The bin's daemon is bundled a second time, as one CommonJS file
 *   (dist/runtimes/node/daemon-script.cjs) that the bin runs as a classic
 *   script with a V8 code cache (runtimes/node/daemon/script-code-cache.ts): Node 20
 *   keeps none for ES modules, and compiling the bundle was the largest part
 *   of a start. `import.meta.url` there is the script's own file URL, in the
 *   same directory as the chunks, so .proto files are found the same way.
 * - Both entry points of the package are bundled once more together, as one
 *   CommonJS file (dist/runtimes/node/library-script.cjs), which the `node`
 *   condition's entry files (library-core.js, library-node.js, written here
 *   from the build's list of each entry point's exports) take from
 *   runtimes/node/library.ts, which runs it with a code cache the same way.
 * - The bins' file is main.ts bundled once more, as CommonJS (main.cjs),
 *   which Node runs without setting up its ES module loader.
 * - The daemon's help text is written beside its script, for the bins' file
 *   to print without loading the daemon (runtimes/node/daemon/kept-help.ts).
 * - The bins' file is made executable, so that a checkout's build can be
 *   linked where a harness looks for `kube-apiserver` (docs/envtest.md).
 * - tsc's per-module output and declarations stay in dist/ (types, and the
 *   benchmarks that import single modules).
 */
import { build, type BuildOptions, type Plugin } from 'esbuild'
import { chmod, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import manifest from '../package.json' with { type: 'json' }
import { helpText } from '../core/options/flags/help.js'
import { KEPT_HELP_FILE } from '../runtimes/node/daemon/kept-help.js'
import { SCRIPT_WRAPPER_END, SCRIPT_WRAPPER_START } from '../runtimes/node/daemon/script-code-cache.js'

const ROOT = join(import.meta.dirname, '..')
const DIST = join(ROOT, 'dist')
/** What the last run wrote besides the entry points, removed before the next so old chunks do not pile up. */
const MANIFEST = join(DIST, '.bundle-files.json')

const ENTRY_POINTS = ['core/index.ts', 'runtimes/node/index.ts', 'runtimes/node/main.ts', 'runtimes/node/yaml-worker.ts', 'runtimes/node/library.ts']

/**
 * The package's entry points under Node (package.json's `node` conditions): each re-exports, name by name,
 * its part of the code-cached library script (runtimes/node/library.ts), with the names the ES module build
 * of that entry point exports.
 */
const LIBRARY_ENTRIES = [
  { file: 'runtimes/node/library-core.js', exportsOf: 'core/index.js', from: 'library.core' },
  { file: 'runtimes/node/library-node.js', exportsOf: 'runtimes/node/index.js', from: 'await library.node()' },
] as const

/** Dependencies copied into the bundle: pure ES modules (or with an ES module build), no dependencies of their own. */
const INLINED = new Set(['yaml', '@opentelemetry/api', 'zod', 'jose', 'hono', '@hono/node-server', '@marcbachmann/cel-js', 're2js', '@noble/ciphers', '@noble/hashes'])
const EXTERNAL = Object.keys(manifest.dependencies)
  .filter((name) => !INLINED.has(name))
  .flatMap((name) => [name, `${name}/*`])

/**
 * zod re-exports its messages in some fifty languages (`z.locales`), about a
 * third of its size; the server words its errors itself and sets no locale,
 * so the bundle keeps English, which zod uses by default, alone.
 */
const onlyEnglishZodMessages: Plugin = {
  name: 'only-english-zod-messages',
  setup(bundle) {
    bundle.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-english' } : undefined,
    )
    bundle.onLoad({ filter: /.*/, namespace: 'zod-english' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))}\n`,
      resolveDir: dirname(args.path),
    }))
  },
}

/**
 * The bundles are written in ASCII alone. V8 keeps every script's source in
 * the heap for as long as its functions live, one byte a character when all
 * of them are Latin-1 and two bytes each otherwise (one Greek mu in a
 * duration pattern doubled the size of a 1.7 MB chunk in memory); and V8
 * reads a file's UTF-8 text in one copy when it is all ASCII, where a single
 * micro sign sent the rest of a 4.6 MB script through its slower decoding
 * (some 13 ms against 8 ms to read it, at every start and import). esbuild
 * escapes what is beyond ASCII in strings, but not in regular expressions
 * or kept comments. Escaping it as \\uXXXX means the same in strings,
 * templates, regular expressions (with or without the u flag, surrogate
 * pairs included) and comments; only a String.raw of such a character (the
 * code has none), or one escaped by a backslash (the build stops on one),
 * would differ.
 */
async function keepSourceAscii(file: string): Promise<void> {
  const text = await readFile(file, 'utf8')
  if (/\\[\u0080-\uffff]/.test(text)) throw new Error(`${file}: a character beyond ASCII escaped by a backslash, which \\uXXXX would change`)
  const escaped = text.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
  if (escaped !== text) await writeFile(file, escaped)
}

async function removePreviousChunks(): Promise<void> {
  const previous = await readFile(MANIFEST, 'utf8').then((text) => JSON.parse(text) as string[], () => [])
  await Promise.all(previous.map((file) => rm(join(DIST, file), { force: true })))
}

/** What both bundles share: Node 20, the externals, the module builds of the dependencies, sources and a metafile. */
const common = {
  absWorkingDir: ROOT,
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // @opentelemetry/api's ES module build (its `main` is CommonJS); yaml has no `module` field, so it is aliased below.
  mainFields: ['module', 'main'],
  alias: { yaml: './node_modules/yaml/browser/index.js', 'yaml/util': './node_modules/yaml/browser/dist/util.js' },
  plugins: [onlyEnglishZodMessages],
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
} satisfies BuildOptions

await removePreviousChunks()
const result = await build({
  ...common,
  entryPoints: ENTRY_POINTS,
  outdir: DIST,
  outbase: '.',
  splitting: true,
  format: 'esm',
  chunkNames: 'runtimes/node/[name]-[hash]',
})
const DAEMON_SCRIPT = 'runtimes/node/daemon-script.cjs'
const LIBRARY_SCRIPT = 'runtimes/node/library-script.cjs'
/**
 * A classic-script bundle of `entry` that script-code-cache.ts runs with a V8 code cache, with the dependencies
 * in `alsoInlined` inside it too.
 */
const classicScript = (entry: string, outfile: string, alsoInlined: readonly string[] = []) =>
  build({
    ...common,
    entryPoints: [entry],
    outfile: join(DIST, outfile),
    external: EXTERNAL.filter((name) => !alsoInlined.some((inlined) => name === inlined || name === `${inlined}/*`)),
    format: 'cjs',
    // import() of an external package as require(): Node 20 loses a script's dynamic-import callback
    // for the functions it takes from a code cache ("A dynamic import callback was not specified").
    supported: { 'dynamic-import': false },
    // A CommonJS file has no import.meta: its own file URL, which the loader passes (script-code-cache.ts).
    define: { 'import.meta.url': '__scriptFileUrl' },
    // What import.meta is left (the YAML worker's `import.meta.resolve` of tsx) runs only from source, never here.
    logOverride: { 'empty-import-meta': 'silent' },
    // The file is the function the loader calls, so that V8 gets the file's text as it is read and
    // does not hold a second copy made by wrapping it; the bundle's "use strict" comes first inside.
    banner: { js: SCRIPT_WRAPPER_START },
    footer: { js: SCRIPT_WRAPPER_END },
  })
/**
 * The library takes the X.509 package in too (a test's listen() makes its certificates with it, and loading its
 * some 40 modules from node_modules was most of the first listen()); the bin loads it only on a first start or to
 * sign a CSR, and keeps its script, which stays resident, smaller.
 */
const LIBRARY_ALSO_INLINED = ['@peculiar/x509']
/**
 * The bin's script takes pino in (the logger every start makes): loaded from node_modules it was some 20 modules
 * resolved and compiled without a code cache on each start. Its transports, the one part that finds files of its
 * own by path, are not used (the daemon writes its log lines itself).
 */
const DAEMON_ALSO_INLINED = ['pino']
/**
 * The bins' file: main.ts as CommonJS, which Node runs without setting up its ES module loader (some 10 to 15 ms of
 * every start, against main.js). It holds only main.ts and the small modules it imports: the daemon is the script
 * above, and the modules main.ts imports from source when there is no script stay imports of tsc's output.
 */
const BIN_SCRIPT = 'runtimes/node/main.cjs'
const binScript = build({
  ...common,
  entryPoints: ['runtimes/node/main.ts'],
  outfile: join(DIST, BIN_SCRIPT),
  external: [...EXTERNAL, './daemon/daemon.js', './daemon/node-runtime.js'],
  format: 'cjs',
  // The file's own URL, where main.ts finds the daemon's script beside it.
  define: { 'import.meta.url': '__binFileUrl' },
  // Strict as the modules it is made of (esbuild's own "use strict" comes after this line, where it does nothing).
  banner: { js: "'use strict';\nconst __binFileUrl = require('node:url').pathToFileURL(__filename).href;" },
})
const scripts = await Promise.all([
  classicScript('runtimes/node/daemon-script.ts', DAEMON_SCRIPT, DAEMON_ALSO_INLINED),
  classicScript('runtimes/node/library-script.ts', LIBRARY_SCRIPT, LIBRARY_ALSO_INLINED),
  binScript,
])
// A cache of the previous build's scripts would be rejected anyway, and its start-up templates may not be this
// build's start-up: remove them rather than leave them stale.
const scriptsDir = join(DIST, dirname(DAEMON_SCRIPT))
await Promise.all((await readdir(scriptsDir)).filter((file) => file.includes('.v8-cache') || file.includes('.startup-')).map((file) => rm(join(scriptsDir, file), { force: true })))
for (const entry of LIBRARY_ENTRIES) {
  const names = result.metafile.outputs[relative(ROOT, join(DIST, entry.exportsOf))]?.exports
  if (!names?.length) throw new Error(`the build lists no exports of dist/${entry.exportsOf}`)
  await writeFile(
    join(DIST, entry.file),
    `// Written by tools/bundle.ts: dist/${entry.exportsOf}'s exports, from the code-cached library script (runtimes/node/library.ts).\n` +
      `import { library } from './library.js'\nexport const { ${[...names].sort().join(', ')} } = ${entry.from}\n`,
  )
}
const written = [...Object.keys(result.metafile.outputs), ...scripts.flatMap((script) => Object.keys(script.metafile.outputs))]
  .map((file) => relative(DIST, join(ROOT, file)))
  .concat(LIBRARY_ENTRIES.map((entry) => entry.file))
await Promise.all(written.filter((file) => /\.c?js$/.test(file)).map((file) => keepSourceAscii(join(DIST, file))))
const entries = new Set(ENTRY_POINTS.flatMap((entry) => [entry.replace(/\.ts$/, '.js'), entry.replace(/\.ts$/, '.js.map')]))
// The help the bins' file prints for `--help` without loading the daemon (runtimes/node/daemon/kept-help.ts).
await writeFile(join(scriptsDir, KEPT_HELP_FILE), helpText())
await writeFile(MANIFEST, `${JSON.stringify(written.filter((file) => !entries.has(file)).sort(), null, 1)}\n`)
// The bins run from a checkout too (a symlink in a KUBEBUILDER_ASSETS folder): executable, as npm makes them on install.
await Promise.all([...new Set(Object.values(manifest.bin))].map((bin) => chmod(join(ROOT, bin), 0o755)))
process.stdout.write(`bundled ${ENTRY_POINTS.length} entry points into ${written.filter((f) => /\.c?js$/.test(f)).length} files\n`)
