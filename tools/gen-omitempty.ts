/**
 * Dev-time generator: reads the Go structs of upstream's API packages and
 * writes core/encoding/protobuf/generated-omitempty.ts, which names, for each
 * message, the fields whose zero value on the protobuf wire means "not set".
 *
 *   npx tsx tools/gen-omitempty.ts API APIMACHINERY APIEXTENSIONS KUBE_AGGREGATOR
 *
 * Each argument is a checkout of the repository of that name (k8s.io/api,
 * k8s.io/apimachinery, k8s.io/apiextensions-apiserver, k8s.io/kube-aggregator).
 *
 * Why: upstream's generated protobuf code writes every plain (non-pointer)
 * field, set or not, and a pointer field only when it is set. So a 0, false
 * or "" on the wire is "not set" for a plain field tagged `omitempty` (Go
 * then leaves it out of JSON), and a real value for a pointer field
 * (`replicas: 0`, `automountServiceAccountToken: false`,
 * `storageClassName: ""`) or a plain field JSON always writes. Which is which
 * is only in the Go types: the decoder needs it to give what upstream would
 * serve for an object a protobuf client wrote.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { typeTable } from '../core/resources/schema/index.js'

/** Where each repository keeps packages, and the definition-name prefix of each package. */
interface Source {
  root: string
  packages: { dir: string; prefix: string }[]
}

function apiPackages(root: string): { dir: string; prefix: string }[] {
  const out: { dir: string; prefix: string }[] = []
  for (const group of readdirSync(root, { withFileTypes: true })) {
    if (!group.isDirectory() || group.name.startsWith('.') || group.name === 'testdata') continue
    for (const version of readdirSync(join(root, group.name), { withFileTypes: true })) {
      if (!version.isDirectory() || !/^v\d/.test(version.name)) continue
      out.push({ dir: join(root, group.name, version.name), prefix: `io.k8s.api.${group.name}.${version.name}` })
    }
  }
  return out
}

interface GoField {
  json: string
  /** The Go type as written: `*bool`, `[]string`, `Protocol`, `metav1.Time`. */
  type: string
  omitempty: boolean
}

/** Each struct of a package: its name and, per field, the JSON name, the Go type and whether omitempty. */
function structsOf(dir: string): Map<string, GoField[]> {
  const structs = new Map<string, GoField[]>()
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.go') || file.endsWith('_test.go') || file.startsWith('zz_generated') || file === 'generated.pb.go') continue
    let current: GoField[] | undefined
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const open = /^type (\w+) struct \{/.exec(line)
      if (open) {
        current = []
        structs.set(open[1]!, current)
        continue
      }
      if (current && /^\}/.test(line)) {
        current = undefined
        continue
      }
      if (!current) continue
      const field = /^\s+(\w+)\s+([^\s`]+)\s+`([^`]*)`/.exec(line)
      const tag = field && /json:"([^"]*)"/.exec(field[3]!)
      if (!field || !tag) continue
      const [json = '', ...options] = tag[1]!.split(',')
      if (json === '' || json === '-') continue
      current.push({ json, type: field[2]!, omitempty: options.includes('omitempty') })
    }
  }
  return structs
}

function main(): void {
  const [api, apimachinery, apiextensions, aggregator] = process.argv.slice(2)
  if (!api || !apimachinery || !apiextensions || !aggregator) throw new Error('usage: gen-omitempty.ts API APIMACHINERY APIEXTENSIONS KUBE_AGGREGATOR')
  const sources: Source[] = [
    { root: api, packages: apiPackages(api) },
    { root: apimachinery, packages: [{ dir: join(apimachinery, 'pkg/apis/meta/v1'), prefix: 'io.k8s.apimachinery.pkg.apis.meta.v1' }] },
    { root: apiextensions, packages: [{ dir: join(apiextensions, 'pkg/apis/apiextensions/v1'), prefix: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1' }] },
    { root: aggregator, packages: [{ dir: join(aggregator, 'pkg/apis/apiregistration/v1'), prefix: 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1' }] },
  ]
  const packages = sources.flatMap((s) => s.packages.map((pkg) => ({ ...pkg, structs: structsOf(pkg.dir) })))
  const structNames = new Set(packages.flatMap((pkg) => [...pkg.structs.keys()]))
  // A plain field whose zero the wire can carry: not a pointer, a list, a map or a struct (a struct is a message,
  // never a 0, false or "", and Go's omitempty does not leave a struct out).
  const scalar = (type: string): boolean => !/^(\*|\[\]|map\[)/.test(type) && !structNames.has(type.replace(/^\w+\./, ''))
  const table: [string, string[]][] = []
  for (const pkg of packages) {
    for (const [name, fields] of pkg.structs) {
      const definition = `${pkg.prefix}.${name}`
      // Only the messages the catalogue serves: the decoder looks no other up.
      if (!typeTable[definition]) continue
      table.push([definition, fields.filter((f) => f.omitempty && scalar(f.type)).map((f) => f.json)])
    }
  }
  table.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const lines = table.map(([name, fields]) => `  ${JSON.stringify(name)}: [${fields.map((f) => JSON.stringify(f)).join(', ')}],`)
  const out = `// Code generated by tools/gen-omitempty.ts from upstream's Go API types. DO NOT EDIT.
// Regenerate: npx tsx tools/gen-omitempty.ts API APIMACHINERY APIEXTENSIONS KUBE_AGGREGATOR

/**
 * For each message the catalogue serves: its plain (non-pointer) scalar
 * fields tagged \`omitempty\`, whose zero value on the protobuf wire means
 * "not set". A message named here has every other field kept as the wire
 * gives it.
 */
export const PLAIN_OMITEMPTY_FIELDS: Readonly<Record<string, readonly string[]>> = {
${lines.join('\n')}
}
`
  const target = join(import.meta.dirname, '..', 'core', 'encoding', 'protobuf', 'generated-omitempty.ts')
  writeFileSync(target, out)
  console.log(`wrote ${table.length} messages to ${target}`)
}

main()
