/**
 * A hono router whose compiled form is shared by every app that registers
 * the same routes in the same order. Hono compiles its router (one regular
 * expression per method, from a trie of every path) on the first request,
 * and a server's filter chain and routes are the same for every server
 * built from the same options: a test suite starting servers one after
 * another compiled the same table each time, which was the largest piece
 * of work before a server's first answer.
 *
 * The shared router holds route numbers, not handlers: each app keeps its
 * own handlers and reads its match through them, so servers share nothing
 * but the table of paths. Matching is hono's own router, the one `new
 * Hono()` uses (RegExpRouter, with TrieRouter for paths it cannot compile),
 * so a request matches exactly what it matched with an app's own router.
 */
import type { ParamIndexMap, Params, ParamStash, Result, Router } from 'hono/router'
import { MESSAGE_MATCHER_IS_ALREADY_BUILT } from 'hono/router'
import { RegExpRouter } from 'hono/router/reg-exp-router'
import { SmartRouter } from 'hono/router/smart-router'
import { TrieRouter } from 'hono/router/trie-router'

/** How many route tables are kept: servers with other options (audit, aggregation, profiling) have others, and a process makes a handful. */
const KEPT = 16

/** The kept tables, most recently used last, each with its compiled router. */
const compiled: { routes: readonly (readonly [string, string])[]; router: Router<number> }[] = []

/**
 * The router that matches each kept route table: `RegExpRouter` where hono
 * compiled the table, `TrieRouter` where it could not (a parameter beside
 * fixed names at one place in a path, for one), which then walks its trie
 * on every request. Tables not yet asked to match are not listed. For the
 * test that keeps every table the server builds on the compiled router.
 */
export function routeTableMatchers(): string[] {
  return compiled.flatMap(({ router }) => {
    // SmartRouter names itself after the router it chose, once it matched a first path.
    const chosen = /^SmartRouter \+ (\w+)$/.exec(router.name)?.[1]
    return chosen ? [chosen] : []
  })
}

const sameTable = (a: readonly (readonly [string, string])[], b: readonly (readonly [string, string])[]): boolean =>
  a.length === b.length && a.every(([method, path], i) => method === b[i]![0] && path === b[i]![1])

/** The compiled router of a route table (its methods and paths, in order; the routes are numbered in that order). */
function compiledRouter(routes: readonly (readonly [string, string])[]): Router<number> {
  // Compared route by route, newest first: a key built of every path cost each new server more than the comparison.
  let at = compiled.length - 1
  while (at >= 0 && !sameTable(compiled[at]!.routes, routes)) at--
  const kept = at >= 0 ? compiled.splice(at, 1)[0]! : { routes, router: newRouter(routes) }
  compiled.push(kept)
  if (compiled.length > KEPT) compiled.shift()
  return kept.router
}

function newRouter(routes: readonly (readonly [string, string])[]): Router<number> {
  const router = new SmartRouter<number>({ routers: [new RegExpRouter<number>(), new TrieRouter<number>()] })
  routes.forEach(([method, path], index) => router.add(method, path, index))
  return router
}

type Matched<T> = [T, ParamIndexMap][] | [T, Params][]

export class SharedRouter<T> implements Router<T> {
  name = 'SharedRouter'
  private routes: [string, string][] | undefined = []
  private readonly handlers: T[] = []
  /** A shared match's handler list in this app's handlers: the compiled router hands out the same list for the same route each time. */
  private readonly mine = new WeakMap<object, Matched<T>>()

  add(method: string, path: string, handler: T): void {
    // As hono's routers: the table is fixed once the first request compiled it.
    if (!this.routes) throw new Error(MESSAGE_MATCHER_IS_ALREADY_BUILT)
    this.routes.push([method, path])
    this.handlers.push(handler)
  }

  match(method: string, path: string): Result<T> {
    if (this.routes) {
      const shared = compiledRouter(this.routes)
      this.routes = undefined
      this.match = (m, p) => this.own(shared.match(m, p))
    }
    return this.match(method, path)
  }

  private own(result: Result<number>): Result<T> {
    const [matched, stash] = result as [Matched<number>, ParamStash?]
    let handlers = this.mine.get(matched)
    if (!handlers) {
      handlers = (matched as [number, unknown][]).map(([index, params]) => [this.handlers[index]!, params]) as Matched<T>
      if (matched.length) this.mine.set(matched, handlers)
    }
    return (result.length === 1 ? [handlers] : [handlers, stash]) as Result<T>
  }
}
