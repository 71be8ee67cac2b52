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

/** The kept tables' compiled routers, and the routes they were compiled from, by the table's key (`tableKey`), most recently used last. */
const compiled = new Map<string, { router: Router<number>; routes: readonly (readonly [string, string])[] }>()

/**
 * The router that matches each kept route table: `RegExpRouter` where hono
 * compiled the table, `TrieRouter` where it could not (a parameter beside
 * fixed names at one place in a path, for one), which then walks its trie
 * on every request. Tables not yet asked to match are not listed. For the
 * test that keeps every table the server builds on the compiled router.
 */
export function routeTableMatchers(): string[] {
  return [...compiled.values()].flatMap(({ router }) => {
    // SmartRouter names itself after the router it chose, once it matched a first path.
    const chosen = /^SmartRouter \+ (\w+)$/.exec(router.name)?.[1]
    return chosen ? [chosen] : []
  })
}

/**
 * The routes (method and path, in the order they were added) of each kept
 * route table, middleware included: for the tests that walk every route a
 * server answers.
 */
export function routeTables(): (readonly (readonly [string, string])[])[] {
  return [...compiled.values()].map(({ routes }) => routes)
}

/** A route's part of its table's key: paths cannot hold a NUL, so two tables' keys cannot be confused. */
const tableKey = (method: string, path: string): string => `${method}\0${path}\0`

/** The compiled router of a route table (its methods and paths, in order; the routes are numbered in that order). */
function compiledRouter(key: string, routes: readonly (readonly [string, string])[]): Router<number> {
  let table = compiled.get(key)
  // Most recently used last, so the oldest is the one dropped.
  if (table) compiled.delete(key)
  else table = { router: newRouter(routes), routes }
  compiled.set(key, table)
  if (compiled.size > KEPT) compiled.delete(compiled.keys().next().value!)
  return table.router
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
  /** The table's key, grown route by route as routes are added (a joined string made at once cost each server's first request). */
  private key = ''
  private readonly handlers: T[] = []
  /** A shared match's handler list in this app's handlers: the compiled router hands out the same list for the same route each time. */
  private readonly mine = new WeakMap<object, Matched<T>>()

  add(method: string, path: string, handler: T): void {
    // As hono's routers: the table is fixed once the first request compiled it.
    if (!this.routes) throw new Error(MESSAGE_MATCHER_IS_ALREADY_BUILT)
    this.routes.push([method, path])
    this.key += tableKey(method, path)
    this.handlers.push(handler)
  }

  match(method: string, path: string): Result<T> {
    if (this.routes) {
      const shared = compiledRouter(this.key, this.routes)
      this.routes = undefined
      this.key = ''
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
