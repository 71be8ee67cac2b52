/**
 * Duplicate fields in a request body, which JSON.parse and YAML parsers
 * silently resolve (the last one wins) but upstream's strict decoder reports
 * (`duplicate field "spec.replicas"`) for field validation. YAML bodies
 * find theirs as they are decoded (yaml-body.ts).
 */
import { type Checkpointed, runAtOnce } from '../machinery/time-slice.js'

interface Frame {
  /** Keys seen so far (objects) or undefined (arrays). */
  keys?: Set<string>
  index: number
  path: string
  /** The place of the value that comes next in this frame. */
  next: string
}

const childPath = (path: string, key: string) => (path ? `${path}.${key}` : key)

/**
 * The fields that appear more than once in their object, in document order
 * and upstream's words (`duplicate field "spec.replicas"`), for a text
 * JSON.parse has already accepted.
 */
export function duplicateJsonFields(text: string): string[] {
  return runAtOnce(duplicateJsonFieldsWalk(text))
}

/** Characters scanned between two checkpoints. */
const RUN = 1 << 16

/** The same scan with checkpoints, for bodies of megabytes (runInSlices). */
export function* duplicateJsonFieldsWalk(text: string): Checkpointed<string[]> {
  const found: string[] = []
  let checkpoint = RUN
  const stack: Frame[] = []
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    if (i >= checkpoint) {
      checkpoint = i + RUN
      yield
    }
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      let end = i + 1
      let escaped = false
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end)
        if (d === 0x5c /* \ */) {
          escaped = true
          end++
        } else if (d === 0x22) break
      }
      const top = stack[stack.length - 1]
      if (expectKey && top?.keys) {
        const raw = text.slice(i + 1, end)
        const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : raw
        const path = childPath(top.path, key)
        if (top.keys.has(key)) found.push(`duplicate field ${JSON.stringify(path)}`)
        else top.keys.add(key)
        top.next = path
        expectKey = false
      }
      i = end
    } else if (c === 0x7b /* { */) {
      stack.push({ keys: new Set(), index: 0, path: valuePath(stack), next: '' })
      expectKey = true
    } else if (c === 0x5b /* [ */) {
      const path = valuePath(stack)
      stack.push({ index: 0, path, next: `${path}[0]` })
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop()
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1]
      if (top?.keys) expectKey = true
      else if (top) top.next = `${top.path}[${++top.index}]`
    }
  }
  return found
}

function valuePath(stack: Frame[]): string {
  return stack[stack.length - 1]?.next ?? ''
}
