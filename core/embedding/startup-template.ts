/**
 * Start-up templates: a test suite starts many servers alike, and each
 * would write the same ~150 objects at start (system namespaces, priority
 * classes, flow schemas, RBAC policy, the `kubernetes` Service, the seeded
 * objects) through the whole write path. The first server started with
 * given options keeps what its start-up stored; the next one started with
 * the same options in the same process begins from that state (the store's
 * values are frozen and shared, so this copies nothing), and its start-up
 * then finds everything in place and writes nothing it need not.
 *
 * Only what is the same for every such server is kept: leases and the
 * endpoint reconciler's address leases (each server takes its own) and
 * events are left out. Servers begun from one template share the uids and
 * creation times of what start-up made; `reuseStartup: false` turns this off.
 *
 * With the `startupTemplates` port, a template is also kept as text beyond
 * the process, and a process's first server alike begins from it: a test
 * suite's processes (one per test file) then share them too.
 */
import type { StartupTemplateFiles } from '../ports.js'
import { type MemorySnapshot, type MemoryStorage, snapshotFromText, snapshotText } from '../storage/memory.js'
import { PER_SERVER_RESOURCES } from '../storage/stored-startup-template.js'

/** Ports that change nothing start-up stores; any other port given (a clock, storage, admission) turns templates off. */
const NEUTRAL_PORTS = new Set(['logger', 'webhookClient', 'yamlDecoder', 'proxyTransport', 'checkProxyable', 'tracerProvider', 'startupTemplates'])


/** How many option sets keep a template: a suite uses a handful. */
const KEPT = 16

const templates = new Map<string, MemorySnapshot>()

export interface StartupTemplate {
  /** The store began from a template: what start-up seeds is already stored. */
  readonly reused: boolean
  /** Called once start-up is done: keeps its state for later servers with the same options. */
  keep(): void
}

/** What of the server's options decides whether a template is used; the key is all of them. */
export interface TemplateOptions {
  readonly reuseStartup?: boolean
  readonly multiServer?: unknown
  readonly controllers?: readonly string[]
  readonly nodes?: unknown
}

const NONE: StartupTemplate = { reused: false, keep: () => {} }

export interface TemplateTarget {
  /** The in-memory store the server made; undefined when the embedder gave its own. */
  readonly memory: MemoryStorage | undefined
  /** Values are sealed by encryption at rest: a template would hold another server's keys' output. */
  readonly encrypted: boolean
  /** Where keys start, without a trailing slash. */
  readonly root: string
  /** Where templates are kept beyond the process (the `startupTemplates` port), if anywhere. */
  readonly files?: StartupTemplateFiles | undefined
}

/**
 * Begins `target.memory` from the template of `options` if one is kept.
 * Servers whose start-up is not the same each time (a clock or storage of
 * the embedder's, several servers on one store, controllers or simulated
 * nodes writing as they start) neither use nor leave one.
 */
export function beginFromTemplate(options: TemplateOptions, portNames: readonly string[], target: TemplateTarget): StartupTemplate {
  const { memory } = target
  if (!memory || target.encrypted || options.reuseStartup === false) return NONE
  if (options.multiServer || options.controllers?.length || options.nodes) return NONE
  if (portNames.some((name) => !NEUTRAL_PORTS.has(name))) return NONE
  const key = templateKey(options)
  if (key === undefined) return NONE
  const kept = templates.get(key) ?? keptBeyondProcess(key, target.files)
  if (kept) {
    memory.restore(kept)
    // Most recently used last, so the oldest is the one dropped.
    templates.delete(key)
    templates.set(key, kept)
    return { reused: true, keep: () => {} }
  }
  const perServer = PER_SERVER_RESOURCES.map((resource) => `${target.root}/${resource}/`)
  return {
    reused: false,
    keep() {
      const snapshot = memory.snapshot((k) => !perServer.some((prefix) => k.startsWith(prefix)))
      templates.set(key, snapshot)
      if (templates.size > KEPT) templates.delete(templates.keys().next().value!)
      const text = target.files && snapshotText(snapshot)
      if (text) target.files!.write(key, text)
    },
  }
}

/** The template an earlier process kept under `key`; none when there is none, or its text is not one. */
function keptBeyondProcess(key: string, files: StartupTemplateFiles | undefined): MemorySnapshot | undefined {
  const text = files?.read(key)
  if (text === undefined) return undefined
  try {
    return snapshotFromText(text)
  } catch {
    // Another layout, or a file cut short: this server starts up afresh and keeps its own.
    return undefined
  }
}

/** The options as text: equal text, equal start-up. Options that are not plain data have no key. */
function templateKey(options: TemplateOptions): string | undefined {
  try {
    return JSON.stringify(options, (_, value: unknown) => {
      if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') throw new TypeError('not plain data')
      if (value instanceof Map || value instanceof Set || ArrayBuffer.isView(value)) throw new TypeError('not plain data')
      return value
    })
  } catch {
    return undefined
  }
}
