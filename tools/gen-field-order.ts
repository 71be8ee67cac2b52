/**
 * Dev-time generator: the order in which upstream's Go types declare their
 * JSON fields, which is the order Go's encoding/json writes them in. The
 * type tables list fields alphabetically, and protobuf numbers are no guide
 * either (PodSpec declares initContainers, number 20, before containers,
 * number 2), so the order is read from the Go struct declarations
 * themselves and written to core/encoding/generated/go-field-order.ts.
 *
 *   npx tsx tools/gen-field-order.ts path/to/staging/src/k8s.io
 *
 * The directory holds upstream's api, apimachinery, apiextensions-apiserver
 * and kube-aggregator sources (kubernetes/kubernetes' staging/src/k8s.io, or
 * checkouts of the published repositories side by side). Only the generated
 * file is used at run time.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generatedTypes } from '../core/resources/schema/generated/index.js'

const root = process.argv[2]
if (!root) {
  console.error('usage: npx tsx tools/gen-field-order.ts path/to/staging/src/k8s.io')
  process.exit(2)
}
const outFile = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'core', 'encoding', 'generated', 'go-field-order.ts')

/** Where the Go package of a definition-name prefix lives under the source root. */
function packageDir(prefix: string): string | undefined {
  const api = /^io\.k8s\.api\.([^.]+)\.([^.]+)$/.exec(prefix)
  if (api) return join(root!, 'api', api[1]!, api[2]!)
  if (prefix === 'io.k8s.apimachinery.pkg.apis.meta.v1') return join(root!, 'apimachinery', 'pkg', 'apis', 'meta', 'v1')
  const ext = /^io\.k8s\.(apiextensions-apiserver|kube-aggregator)\.(pkg\.apis\.[^.]+\.[^.]+)$/.exec(prefix)
  if (ext) return join(root!, ext[1]!, ...ext[2]!.split('.'))
  return undefined
}

/** One field of a Go struct as encoding/json sees it: a JSON name, or an inlined struct. */
type GoField = { json: string } | { inline: string }

/** The struct declarations of one Go package: type name -> fields in declaration order. */
function parsePackage(dir: string): Map<string, GoField[]> {
  const structs = new Map<string, GoField[]>()
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.go') || file.endsWith('_test.go') || file.startsWith('zz_generated') || file.includes('generated')) continue
    const lines = readFileSync(join(dir, file), 'utf8').split('\n')
    for (let i = 0; i < lines.length; i++) {
      const head = /^type (\w+) struct \{\s*$/.exec(lines[i]!)
      if (!head) continue
      const fields: GoField[] = []
      for (i++; i < lines.length && lines[i] !== '}'; i++) {
        const field = parseField(lines[i]!.trim())
        if (field) fields.push(field)
      }
      structs.set(head[1]!, fields)
    }
  }
  return structs
}

/** `Name Type \`json:"name,omitempty"\``, or an embedded `pkg.Type \`json:",inline"\``. */
function parseField(line: string): GoField | undefined {
  if (line === '' || line.startsWith('//')) return undefined
  const tag = /`[^`]*json:"([^"]*)"[^`]*`/.exec(line)?.[1]
  const decl = line.replace(/`.*$/, '').replace(/\/\/.*$/, '').trim().split(/\s+/)
  if (decl.length === 1) {
    // An embedded struct: its fields sit at this level unless a tag names it.
    const name = tag?.split(',')[0]
    if (name) return { json: name }
    return { inline: decl[0]!.replace(/^\*/, '').replace(/^\w+\./, '') }
  }
  const goName = decl[0]!
  if (!/^[A-Z]/.test(goName)) return undefined
  if (tag === undefined) return { json: goName }
  const name = tag.split(',')[0]!
  if (name === '-') return undefined
  if (name === '' && tag.includes('inline')) return { inline: decl[1]!.replace(/^\*/, '').replace(/^\w+\./, '') }
  return { json: name === '' ? goName : name }
}

const packages = new Map<string, Map<string, GoField[]>>()
function structsOf(prefix: string): Map<string, GoField[]> | undefined {
  if (!packages.has(prefix)) {
    const dir = packageDir(prefix)
    packages.set(prefix, dir ? parsePackage(dir) : new Map())
  }
  return packages.get(prefix)
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1'

/** The JSON names of a struct in the order encoding/json writes them, inlined structs expanded in place. */
function jsonOrder(prefix: string, type: string): string[] | undefined {
  const fields = structsOf(prefix)?.get(type) ?? (prefix !== META ? structsOf(META)?.get(type) : undefined)
  if (!fields) return undefined
  const out: string[] = []
  for (const f of fields) {
    if ('json' in f) out.push(f.json)
    else out.push(...(jsonOrder(prefix, f.inline) ?? jsonOrder(META, f.inline) ?? []))
  }
  return out
}

const warnings: string[] = []
const entries: [string, string][] = []
for (const def of Object.values(generatedTypes).sort((a, b) => (a.name < b.name ? -1 : 1))) {
  const dot = def.name.lastIndexOf('.')
  const order = jsonOrder(def.name.slice(0, dot), def.name.slice(dot + 1))
  if (!order) {
    warnings.push(`${def.name}: no Go struct found`)
    continue
  }
  const known = new Set(def.fields.map((f) => f.name))
  const declared = order.filter((n) => known.has(n))
  for (const f of def.fields) if (!declared.includes(f.name)) warnings.push(`${def.name}.${f.name}: not declared in Go`)
  const alphabetical = def.fields.map((f) => f.name).filter((n) => declared.includes(n))
  // The type table's own (alphabetical) order needs no entry.
  if (declared.join(' ') !== alphabetical.join(' ')) entries.push([def.name, declared.join(' ')])
}

let text =
  '// Code generated by tools/gen-field-order.ts from upstream\'s Go type declarations. DO NOT EDIT.\n' +
  '// Regenerate: npx tsx tools/gen-field-order.ts path/to/staging/src/k8s.io\n\n' +
  '/**\n * Definition name -> its JSON fields in Go declaration order (space separated),\n' +
  ' * for the types whose order is not the type table\'s alphabetical one.\n */\n' +
  'export const goFieldOrder: Readonly<Record<string, string>> = {\n'
for (const [name, order] of entries) text += `  ${JSON.stringify(name)}: ${JSON.stringify(order)},\n`
text += '}\n'
writeFileSync(outFile, text)
for (const w of warnings) console.warn(`warning: ${w}`)
console.log(`wrote the field order of ${entries.length} types to ${outFile}`)
