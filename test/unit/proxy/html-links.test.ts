/**
 * The links of proxied HTML pages, rewritten as they stream: the attributes
 * of upstream's table on absolute paths go through the proxy; text, comments,
 * scripts and other attributes pass byte for byte, however the page is cut
 * into chunks.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HtmlLinkRewriter, MAX_HELD_TAG_BYTES, rewriteHtmlLinks } from '../../../core/proxy/html-links.js'
import { rewriteLocation } from '../../../core/proxy/proxied-answer.js'

const PREFIX = '/api/v1/namespaces/ns/services/web:80/proxy'
const context = { proxyPrefix: PREFIX, backendHost: '10.0.0.5:8080', requestHost: 'localhost:8001' }
const rewrite = (url: string): string => rewriteLocation(url, context)

/** The page rewritten when it arrives in the chunks `cuts` make of it. */
function rewritten(page: Uint8Array | string, cuts: number[] = []): string {
  const bytes = typeof page === 'string' ? new TextEncoder().encode(page) : page
  const rewriter = new HtmlLinkRewriter(rewrite)
  const out: Uint8Array[] = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) {
    out.push(...rewriter.push(bytes.subarray(from, cut)))
    from = cut
  }
  out.push(...rewriter.end())
  return Buffer.concat(out).toString('utf8')
}

const PAGE =
  '<!DOCTYPE html><html><head><link rel="stylesheet" href="/style.css"><script src="/app.js"></script></head>' +
  '<body background=/bg.png><a href="/x">x</a> <a href="https://other.example/y">y</a> <a href="relative">r</a> ' +
  "<img src='/i.png' alt=\"/not-a-link\"/><form action=/submit method=post></form>" +
  '<A HREF="/upper">u</A><a title="/t" href="http://10.0.0.5:8080/abs?a=1&amp;b=2#f">abs</a></body></html>'

const EXPECTED =
  '<!DOCTYPE html><html><head><link rel="stylesheet" href="' + PREFIX + '/style.css"><script src="' + PREFIX + '/app.js"></script></head>' +
  '<body background=' + PREFIX + '/bg.png><a href="' + PREFIX + '/x">x</a> <a href="https://other.example/y">y</a> <a href="relative">r</a> ' +
  "<img src='" + PREFIX + "/i.png' alt=\"/not-a-link\"/><form action=" + PREFIX + '/submit method=post></form>' +
  '<A HREF="' + PREFIX + '/upper">u</A><a title="/t" href="' + PREFIX + '/abs?a=1&amp;b=2#f">abs</a></body></html>'

describe('HTML links through a proxy', () => {
  it("rewrites the table's attributes on the backend's absolute paths, and nothing else", () => {
    assert.equal(rewritten(PAGE), EXPECTED)
  })

  it('gives the same page however it is cut into chunks', () => {
    for (let cut = 0; cut <= PAGE.length; cut++) assert.equal(rewritten(PAGE, [cut]), EXPECTED, `cut at ${cut}`)
    assert.equal(
      rewritten(
        PAGE,
        Array.from({ length: PAGE.length }, (_, i) => i),
      ),
      EXPECTED,
    )
  })

  it('leaves scripts, styles, text areas and comments as they are', () => {
    const quoted = '<a href="/in">'
    for (const element of ['script', 'style', 'textarea', 'title', 'xmp', 'noscript', 'iframe']) {
      assert.equal(rewritten(`<${element}>${quoted}</${element.toUpperCase()} ><a href="/after">`), `<${element}>${quoted}</${element.toUpperCase()} ><a href="${PREFIX}/after">`)
    }
    assert.equal(rewritten(`<script>if (a </scriptx) {}</script><a href="/y">`), `<script>if (a </scriptx) {}</script><a href="${PREFIX}/y">`)
    assert.equal(rewritten(`<!-- ${quoted} --><a href="/y">`), `<!-- ${quoted} --><a href="${PREFIX}/y">`)
    // As Go's tokenizer: `<!-->` is a whole comment, and after <plaintext> nothing is markup.
    assert.equal(rewritten('<!--><a href="/z">'), `<!--><a href="${PREFIX}/z">`)
    assert.equal(rewritten(`<plaintext>${quoted}`), `<plaintext>${quoted}`)
  })

  it('reads spaces around an equals sign, a value-less attribute and an equals sign that begins a name', () => {
    assert.equal(rewritten('<a download href = "/x" =odd>'), `<a download href = "${PREFIX}/x" =odd>`)
    assert.equal(rewritten('<a =href="/x" src="/y">'), '<a =href="/x" src="/y">')
  })

  it('reads text with stray angle brackets, and keeps a tag never closed as it came', () => {
    assert.equal(rewritten('1 < 2 <<a href="/x"> <? x ?></3>'), `1 < 2 <<a href="${PREFIX}/x"> <? x ?></3>`)
    assert.equal(rewritten('<a href="/x'), '<a href="/x')
  })

  it('keeps bytes that are not UTF-8, and names in other encodings, byte for byte', () => {
    const page = Uint8Array.from([...new TextEncoder().encode('<a href="/caf'), 0xe9, ...new TextEncoder().encode('">'), 0xff, 0xfe])
    const out = new HtmlLinkRewriter(rewrite)
    const bytes = Buffer.concat([...out.push(page), ...out.end()])
    assert.deepEqual([...bytes], [...new TextEncoder().encode(`<a href="${PREFIX}/caf`), 0xe9, ...new TextEncoder().encode('">'), 0xff, 0xfe])
  })

  it('passes a tag longer than it holds unrewritten, and reads on after it', () => {
    const big = `<a href="/x" data-blob="${'A'.repeat(MAX_HELD_TAG_BYTES)}">`
    const page = `${big}<a href="/y">`
    const expected = `${big}<a href="${PREFIX}/y">`
    for (const cuts of [[], [10, 100_000, 200_000], [10, 100_000, 200_000, MAX_HELD_TAG_BYTES + 10]]) {
      const out = rewritten(page, cuts)
      assert.ok(out === expected, `cut at ${cuts.join()}: ${out.slice(0, 60)}...${out.slice(-60)}`)
    }
  })

  it('rewrites a stream', async () => {
    const chunks = [PAGE.slice(0, 40), PAGE.slice(40, 41), PAGE.slice(41)].map((s) => new TextEncoder().encode(s))
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk)
        controller.close()
      },
    })
    assert.equal(await new Response(rewriteHtmlLinks(body, rewrite)).text(), EXPECTED)
  })
})
