/**
 * Links in an HTML page a backend answers through a proxy, rewritten as
 * upstream's proxy transport rewrites them: the URL attributes of its table
 * (`a href`, `img src`, `form action`, `script src` ...) go through the same
 * rewrite as a redirect's Location, so a page served under
 * `.../services/web/proxy/` links to its own paths through the proxy.
 *
 * The page is read as it streams, a tag at a time: only a start tag that can
 * hold such an attribute is held until its `>` (at most MAX_HELD_TAG_BYTES;
 * a longer one passes as it came), everything else passes at once, byte for
 * byte. A page of any size costs bounded memory and time linear in its
 * length, where upstream reads the whole page before it answers. Bytes are
 * kept as they came (no decoding of the page's text), so a page in any
 * ASCII-compatible encoding passes unchanged but for the links.
 */
import { joinedBytes } from '../machinery/joined-bytes.js'
import { appendAll } from '../machinery/append-all.js'

/** The attributes upstream rewrites, by element (apimachinery's proxy transport, `atomsToAttrs`). */
const URL_ATTRIBUTES: ReadonlyMap<string, readonly string[]> = new Map([
  ['a', ['href']],
  ['applet', ['codebase']],
  ['area', ['href']],
  ['audio', ['src']],
  ['base', ['href']],
  ['blockquote', ['cite']],
  ['body', ['background']],
  ['button', ['formaction']],
  ['command', ['icon']],
  ['del', ['cite']],
  ['embed', ['src']],
  ['form', ['action']],
  ['frame', ['longdesc', 'src']],
  ['head', ['profile']],
  ['html', ['manifest']],
  ['iframe', ['longdesc', 'src']],
  ['img', ['longdesc', 'src', 'usemap']],
  ['input', ['src', 'usemap', 'formaction']],
  ['ins', ['cite']],
  ['link', ['href']],
  ['object', ['classid', 'codebase', 'data', 'usemap']],
  ['q', ['cite']],
  ['script', ['src']],
  ['source', ['src']],
  ['video', ['poster', 'src']],
])

/** Elements whose content is text up to their end tag, as Go's HTML tokenizer reads them (self-closed too). */
const RAW_TEXT = new Set(['iframe', 'noembed', 'noframes', 'noscript', 'script', 'style', 'textarea', 'title', 'xmp'])

/** The most of one start tag held for rewriting; a longer tag passes unrewritten. */
export const MAX_HELD_TAG_BYTES = 256 * 1024

/** Longer names are no element's or attribute's of the table: not kept past this. */
const MAX_NAME = 16

const LT = 0x3c
const GT = 0x3e
const SLASH = 0x2f
const BANG = 0x21
const QUESTION = 0x3f
const DASH = 0x2d
const EQUALS = 0x3d
const DQUOTE = 0x22
const SQUOTE = 0x27

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d
const isLetter = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)
const lower = (c: number): number => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c)

type Where =
  | 'data'
  | 'tag-open' // after `<`
  | 'end-tag-open' // after `</`
  | 'markup' // after `<!`, a `-` or two being read
  | 'comment'
  | 'bogus' // `<!DOCTYPE`, `<?`, `</3`: up to `>`
  | 'tag' // inside a start or end tag
  | 'raw' // the text of a raw-text element, up to its end tag
  | 'plaintext' // everything after `<plaintext>`

/** Where inside a tag (the HTML tokenizer's attribute states, as far as finding the tag's end needs). */
type InTag = 'name' | 'before-attribute' | 'attribute' | 'after-attribute' | 'before-value' | 'double' | 'single' | 'unquoted' | 'self-closing'

interface Span {
  start: number
  end: number
}

export class HtmlLinkRewriter {
  private where: Where = 'data'
  private inTag: InTag = 'name'
  private endTag = false
  private tagName = ''
  private attributeName = ''
  /** Bytes of the current tag read so far, from its `<`. */
  private tagOffset = 0
  private valueStart = 0
  /** Where the values to rewrite lie in the held tag. */
  private spans: Span[] = []
  /** True while a start tag is held (from its `<`) for rewriting. */
  private holding = false
  /** Set when the held tag turned out to be one nothing is rewritten in: it is let go at once. */
  private releasePending = false
  private held: Uint8Array[] = []
  private heldBytes = 0
  private dashes = 0
  /** `</name` of the raw-text element being read, and how much of it the text just read matched. */
  private rawEnd = ''
  private rawMatched = 0

  constructor(private readonly rewrite: (url: string) => string) {}

  /** The bytes to send for `chunk`: some may be held until a later chunk ends their tag. */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = []
    let mark = 0
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!
      switch (this.where) {
        case 'data': {
          const next = chunk.indexOf(LT, i)
          if (next < 0) {
            i = chunk.length
            break
          }
          i = next
          if (mark < i) out.push(chunk.subarray(mark, i))
          mark = i
          this.holding = true
          this.where = 'tag-open'
          break
        }
        case 'tag-open':
          if (isLetter(c)) {
            this.beginTag(false, 2)
            this.tagName = String.fromCharCode(lower(c))
          } else {
            this.release(out)
            if (c === BANG) {
              this.where = 'markup'
              this.dashes = 0
            } else if (c === SLASH) this.where = 'end-tag-open'
            else if (c === QUESTION) this.where = 'bogus'
            else {
              // `<` followed by text is text; this byte may open a tag of its own.
              this.where = 'data'
              i--
            }
          }
          break
        case 'end-tag-open':
          if (isLetter(c)) this.beginTag(true, 2)
          else this.where = c === GT ? 'data' : 'bogus'
          break
        case 'markup':
          if (c === DASH && this.dashes < 2) {
            if (++this.dashes === 2) this.where = 'comment'
          } else {
            this.where = 'bogus'
            i--
          }
          break
        case 'comment':
          // `<!-->` and `<!--->` end at once, as Go's tokenizer reads them.
          if (c === GT && this.dashes >= 2) this.where = 'data'
          else this.dashes = c === DASH ? this.dashes + 1 : 0
          break
        case 'bogus':
          if (c === GT) this.where = 'data'
          break
        case 'raw':
          if (this.rawMatched === this.rawEnd.length) {
            if (isSpace(c) || c === SLASH || c === GT) {
              // The element's end tag: read to its `>` as any end tag.
              this.beginTag(true, this.rawEnd.length)
              this.inTag = 'before-attribute'
              i--
              break
            }
            this.rawMatched = 0
          }
          if (lower(c) === this.rawEnd.charCodeAt(this.rawMatched)) this.rawMatched++
          else this.rawMatched = c === LT ? 1 : 0
          break
        case 'plaintext':
          i = chunk.length
          break
        case 'tag': {
          const closed = this.readTag(c)
          if (this.releasePending) {
            this.releasePending = false
            this.release(out)
          }
          if (closed) {
            if (this.holding) {
              out.push(this.rewritten(chunk.subarray(mark, i + 1)))
              mark = i + 1
            }
            this.afterTag()
          } else this.tagOffset++
          break
        }
      }
    }
    if (this.holding) {
      this.hold(chunk.subarray(mark))
      if (this.heldBytes > MAX_HELD_TAG_BYTES) this.release(out)
    } else if (mark < chunk.length) out.push(chunk.subarray(mark))
    return out
  }

  /** What is left at the end of the page: a tag never closed, as it came. */
  end(): Uint8Array[] {
    const out: Uint8Array[] = []
    this.release(out)
    return out
  }

  /** A tag begins; `offset` is where its next byte lies from its `<`. */
  private beginTag(endTag: boolean, offset: number): void {
    this.where = 'tag'
    this.inTag = 'name'
    this.endTag = endTag
    this.tagName = ''
    this.tagOffset = offset
    this.spans = []
  }

  private hold(bytes: Uint8Array): void {
    if (bytes.length === 0) return
    // A copy: the source may reuse its chunk once it is handed on.
    this.held.push(bytes.slice())
    this.heldBytes += bytes.length
  }

  /** Sends what was held as it came and reads on without holding. */
  private release(out: Uint8Array[]): void {
    if (!this.holding) return
    appendAll(out, this.held)
    this.held = []
    this.heldBytes = 0
    this.holding = false
    this.spans = []
  }

  /** Reads one byte of a tag; true at its closing `>`. */
  private readTag(c: number): boolean {
    switch (this.inTag) {
      case 'name':
        if (isSpace(c)) this.nameRead('before-attribute')
        else if (c === SLASH) this.nameRead('self-closing')
        else if (c === GT) {
          this.nameRead('name')
          return true
        } else if (this.tagName.length <= MAX_NAME) this.tagName += String.fromCharCode(lower(c))
        return false
      case 'self-closing':
        if (c === GT) return true
        this.inTag = 'before-attribute'
        return this.readTag(c)
      case 'before-attribute':
      case 'after-attribute':
        if (isSpace(c)) return false
        if (c === SLASH) this.inTag = 'self-closing'
        else if (c === GT) return true
        // `a = b`: the value of the attribute just named; before any name, `=` begins one.
        else if (c === EQUALS && this.inTag === 'after-attribute') this.inTag = 'before-value'
        else {
          this.inTag = 'attribute'
          this.attributeName = String.fromCharCode(lower(c))
        }
        return false
      case 'attribute':
        if (isSpace(c)) this.inTag = 'after-attribute'
        else if (c === SLASH) this.inTag = 'self-closing'
        else if (c === EQUALS) this.inTag = 'before-value'
        else if (c === GT) return true
        else if (this.attributeName.length <= MAX_NAME) this.attributeName += String.fromCharCode(lower(c))
        return false
      case 'before-value':
        if (isSpace(c)) return false
        if (c === GT) return true
        if (c === DQUOTE || c === SQUOTE) {
          this.inTag = c === DQUOTE ? 'double' : 'single'
          this.valueStart = this.tagOffset + 1
        } else {
          this.inTag = 'unquoted'
          this.valueStart = this.tagOffset
        }
        return false
      case 'double':
      case 'single':
        if (c === (this.inTag === 'double' ? DQUOTE : SQUOTE)) {
          this.valueRead(this.tagOffset)
          this.inTag = 'before-attribute'
        }
        return false
      case 'unquoted':
        if (isSpace(c) || c === GT) {
          this.valueRead(this.tagOffset)
          this.inTag = 'before-attribute'
          return c === GT
        }
        return false
    }
  }

  /** The tag's name is read: a start tag no attribute of which is rewritten is not held further. */
  private nameRead(next: InTag): void {
    this.inTag = next
    if (this.holding && !URL_ATTRIBUTES.has(this.tagName)) this.releasePending = true
  }

  private valueRead(end: number): void {
    if (!this.holding || this.releasePending) return
    if (URL_ATTRIBUTES.get(this.tagName)?.includes(this.attributeName)) this.spans.push({ start: this.valueStart, end })
  }

  private afterTag(): void {
    this.holding = false
    this.held = []
    this.heldBytes = 0
    this.spans = []
    if (this.endTag) this.where = 'data'
    else if (this.tagName === 'plaintext') this.where = 'plaintext'
    else if (RAW_TEXT.has(this.tagName)) {
      this.where = 'raw'
      this.rawEnd = `</${this.tagName}`
      this.rawMatched = 0
    } else this.where = 'data'
  }

  /** The held tag ended by `last`, its URL values rewritten. */
  private rewritten(last: Uint8Array): Uint8Array {
    const bytes = this.held.length === 0 ? last : concat([...this.held, last])
    // Past the bound the tag passes as it came, however the page was cut into chunks.
    if (this.spans.length === 0 || bytes.length > MAX_HELD_TAG_BYTES) return bytes
    // One character per byte: the rewrite sees the URL's ASCII structure and keeps every other byte as it was.
    let text = ''
    for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192))
    for (const { start, end } of [...this.spans].reverse()) {
      const value = text.slice(start, end)
      const changed = this.rewrite(value)
      if (changed !== value) text = text.slice(0, start) + changed + text.slice(end)
    }
    const out = new Uint8Array(text.length)
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff
    return out
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0
  for (const part of parts) length += part.length
  return joinedBytes(parts, length)
}

/** `body` with its links rewritten as it streams. */
export function rewriteHtmlLinks(body: ReadableStream<Uint8Array>, rewrite: (url: string) => string): ReadableStream<Uint8Array> {
  const rewriter = new HtmlLinkRewriter(rewrite)
  const send = (parts: Uint8Array[], controller: TransformStreamDefaultController<Uint8Array>): void => {
    for (const part of parts) if (part.length > 0) controller.enqueue(part)
  }
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => send(rewriter.push(chunk), controller),
      flush: (controller) => send(rewriter.end(), controller),
    }),
  )
}
