/**
 * Dev-time reader of upstream's Go API structs, for the generators that need
 * what only the Go declarations say: the order encoding/json writes fields
 * in (gen-field-order.ts), and which fields it writes when they are empty
 * (gen-go-encoding.ts).
 *
 * The source root holds upstream's api, apimachinery, apiextensions-apiserver
 * and kube-aggregator sources side by side (kubernetes/kubernetes'
 * staging/src/k8s.io, or checkouts of the published repositories).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1'

/** One field of a Go struct as encoding/json sees it: a JSON name with its Go type and tag, or an inlined struct. */
export type GoField = { json: string; goType: string; omitempty: boolean } | { inline: string }

/** A field of a struct with inlined structs expanded in place. */
export interface GoJsonField {
  json: string
  /** The Go type as declared: `*bool`, `[]string`, `metav1.Time`. */
  goType: string
  omitempty: boolean
}

/** Where the Go package of a definition-name prefix lives under the source root. */
function packageDir(root: string, prefix: string): string | undefined {
  const api = /^io\.k8s\.api\.([^.]+)\.([^.]+)$/.exec(prefix)
  if (api) return join(root, 'api', api[1]!, api[2]!)
  if (prefix === META) return join(root, 'apimachinery', 'pkg', 'apis', 'meta', 'v1')
  const ext = /^io\.k8s\.(apiextensions-apiserver|kube-aggregator)\.(pkg\.apis\.[^.]+\.[^.]+)$/.exec(prefix)
  if (ext) return join(root, ext[1]!, ...ext[2]!.split('.'))
  return undefined
}

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
  const [name = '', ...options] = tag?.split(',') ?? []
  const omitempty = options.includes('omitempty')
  if (decl.length === 1) {
    // An embedded struct: its fields sit at this level unless a tag names it.
    if (name) return { json: name, goType: decl[0]!, omitempty }
    return { inline: decl[0]!.replace(/^\*/, '').replace(/^\w+\./, '') }
  }
  const goName = decl[0]!
  if (!/^[A-Z]/.test(goName)) return undefined
  if (tag === undefined) return { json: goName, goType: decl[1]!, omitempty: false }
  if (name === '-') return undefined
  if (name === '' && tag.includes('inline')) return { inline: decl[1]!.replace(/^\*/, '').replace(/^\w+\./, '') }
  return { json: name === '' ? goName : name, goType: decl[1]!, omitempty }
}

/** Reads the packages under `root` as they are asked for. */
export function goApiSource(root: string): { fields(prefix: string, type: string): GoJsonField[] | undefined } {
  const packages = new Map<string, Map<string, GoField[]>>()
  const structsOf = (prefix: string): Map<string, GoField[]> | undefined => {
    if (!packages.has(prefix)) {
      const dir = packageDir(root, prefix)
      // A package newer than the sources (a group/version the type tables have and this release had not) has no structs.
      packages.set(prefix, dir && existsSync(dir) ? parsePackage(dir) : new Map())
    }
    return packages.get(prefix)
  }
  /** The JSON fields of a struct in the order encoding/json writes them, inlined structs expanded in place. */
  const fields = (prefix: string, type: string): GoJsonField[] | undefined => {
    const declared = structsOf(prefix)?.get(type) ?? (prefix !== META ? structsOf(META)?.get(type) : undefined)
    if (!declared) return undefined
    const out: GoJsonField[] = []
    for (const f of declared) {
      if ('json' in f) out.push(f)
      else out.push(...(fields(prefix, f.inline) ?? fields(META, f.inline) ?? []))
    }
    return out
  }
  return { fields }
}

/** The source root named on a generator's command line; without one, the usage and exit status 2. */
export function goApiSourceFromArguments(tool: string): ReturnType<typeof goApiSource> {
  const root = process.argv[2]
  if (!root) {
    console.error(`usage: npx tsx tools/${tool} path/to/staging/src/k8s.io`)
    process.exit(2)
  }
  return goApiSource(root)
}
