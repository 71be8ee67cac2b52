/**
 * The README and docs/ link to each other by relative paths and heading
 * anchors; moving a section breaks them silently, so every such link is
 * checked here against the files and headings as they are.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, it } from 'node:test'

const ROOT = join(import.meta.dirname, '..', '..')
const DOCS = join(ROOT, 'docs')
const PAGES = [join(ROOT, 'README.md'), ...readdirSync(DOCS).filter((f) => f.endsWith('.md')).sort().map((f) => join(DOCS, f))]

/** The page's lines outside fenced code blocks, where a link or heading means something. */
function proseLines(markdown: string): string[] {
  let fenced = false
  return markdown.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced
      return false
    }
    return !fenced
  })
}

/** Heading anchors as GitHub makes them: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** The targets of the page's inline links, code spans left out (`[a](b)` there is text, not a link). */
export function linkTargets(markdown: string): string[] {
  return proseLines(markdown).flatMap((line) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? ''),
  )
}

/** What is wrong with each relative link of the page at `file`: a missing file, or an anchor no heading makes. */
export function brokenLinks(file: string, markdown: string): string[] {
  const problems: string[] = []
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // https:, mailto: and the like
    const [path = '', anchor] = target.split('#', 2)
    const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path))
    if (path !== '' && !existsSync(resolved)) {
      problems.push(`${target}: no file ${relative(ROOT, resolved)}`)
      continue
    }
    if (anchor === undefined || !resolved.endsWith('.md')) continue
    const text = resolved === file ? markdown : readFileSync(resolved, 'utf8')
    if (!headingAnchors(text).has(anchor)) problems.push(`${target}: no heading #${anchor} in ${relative(ROOT, resolved)}`)
  }
  return problems
}

describe('links in README.md and docs/', () => {
  for (const page of PAGES) {
    it(`${relative(ROOT, page)}: every relative link names a file that exists and a heading it has`, () => {
      assert.deepEqual(brokenLinks(page, readFileSync(page, 'utf8')), [])
    })
  }

  it('README.md links to every page of docs/', () => {
    const linked = new Set(linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((t) => t.split('#')[0]))
    const unlinked = PAGES.slice(1)
      .map((p) => relative(ROOT, p))
      .filter((p) => !linked.has(p))
    assert.deepEqual(unlinked, [])
  })

  it('reports a missing file, a missing heading, and passes over code and external links', () => {
    const page = join(DOCS, 'example.md')
    const text = [
      '# Title here',
      '## Same',
      '## Same',
      'See [ok](#title-here), [again](#same-1), [flags](flags.md#generic-flags), [web](https://example.com/x.md).',
      'Broken: [gone](nowhere.md), [anchor](flags.md#no-such-heading), [local](#not-here).',
      '`[not a link](missing.md)`',
      '```',
      '[fenced](missing-too.md)',
      '```',
    ].join('\n')
    assert.deepEqual(brokenLinks(page, text), [
      'nowhere.md: no file docs/nowhere.md',
      'flags.md#no-such-heading: no heading #no-such-heading in docs/flags.md',
      '#not-here: no heading #not-here in docs/example.md',
    ])
  })
})
