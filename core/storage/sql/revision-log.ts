/**
 * The SQL of the `log` table (see schema.ts): every query the store runs,
 * prepared once. Rows come back as plain records; turning bytes into objects
 * is the store's business.
 *
 * Key ranges are half-open, `[from, to)`, compared as SQLite compares TEXT
 * (bytewise UTF-8, which is etcd's order for the ASCII keys of the registry).
 */
import type { SqlDriver, SqlRow, SqlStatement } from './driver.js'

export interface LogRow {
  revision: number
  key: string
  createRevision: number
  deleted: boolean
  /** The encoded object; null on a deletion row. */
  value: Uint8Array | null
}

/** A row as a watch replays it: with the state the key had before it. */
export interface ChangeRow extends LogRow {
  prevRevision: number
  /** The previous live state's bytes; null for a creation (or after a deletion). */
  prevValue: Uint8Array | null
}

export interface KeyRange {
  from: string
  to: string
}

/** Every key that starts with `prefix`. */
export function prefixRange(prefix: string): KeyRange {
  if (prefix === '') return { from: '', to: String.fromCodePoint(0x10ffff) }
  // The prefix with its last character raised by one bounds all its extensions ('/' becomes '0').
  const last = prefix.charCodeAt(prefix.length - 1)
  return { from: prefix, to: prefix.slice(0, -1) + String.fromCharCode(last + 1) }
}

/** Exactly `key`. */
export function keyRange(key: string): KeyRange {
  return { from: key, to: keyAfter(key) }
}

/** The smallest key after `key`. */
export function keyAfter(key: string): string {
  return `${key}\u0000`
}

const COLUMNS = 'l.id, l.key, l.create_revision, l.deleted, l.value'

/**
 * The rows that are their key's newest at or below a revision, within a key
 * range: walked in key order along the (key, id, deleted) index, each checked with one
 * index probe, so a page costs its own size rather than the whole range.
 */
const NEWEST_IN_RANGE = `
  FROM log l
  WHERE l.key >= ? AND l.key < ? AND l.id <= ?
    AND l.id = (SELECT MAX(m.id) FROM log m WHERE m.key = l.key AND m.id <= ?)`

export class RevisionLog {
  private readonly newestOfKey: SqlStatement
  private readonly newestAtOrBelow: SqlStatement
  private readonly liveInRange: SqlStatement
  private readonly countLiveInRange: SqlStatement
  private readonly insert: SqlStatement
  private readonly changes: SqlStatement
  private readonly dropSuperseded: SqlStatement
  private readonly dropDeletions: SqlStatement
  private readonly recordCompacted: SqlStatement
  private readonly lastId: SqlStatement
  private readonly compactedAt: SqlStatement
  private readonly allChanges: SqlStatement

  constructor(private readonly db: SqlDriver) {
    this.newestOfKey = db.prepare(`SELECT ${COLUMNS} FROM log l WHERE l.key = ? ORDER BY l.id DESC LIMIT 1`)
    this.newestAtOrBelow = db.prepare(`SELECT ${COLUMNS} FROM log l WHERE l.key = ? AND l.id <= ? ORDER BY l.id DESC LIMIT 1`)
    this.liveInRange = db.prepare(`SELECT ${COLUMNS} ${NEWEST_IN_RANGE} AND l.deleted = 0 ORDER BY l.key LIMIT ?`)
    // Counting needs no values: grouping over the covering (key, id, deleted) index never reads a row.
    // (SQLite takes the bare column of a MAX() aggregate from the row holding the maximum.)
    this.countLiveInRange = db.prepare(`
      SELECT count(*) AS n FROM (
        SELECT MAX(id), deleted FROM log WHERE key >= ? AND key < ? AND id <= ? GROUP BY key
      ) WHERE deleted = 0`)
    this.insert = db.prepare(
      'INSERT INTO log (id, key, create_revision, prev_revision, deleted, value) VALUES (?, ?, ?, ?, ?, ?)',
    )
    // '+' keeps SQLite on the revision range: a watch resumes from a recent revision, over a wide prefix.
    this.changes = db.prepare(`
      SELECT l.id, l.key, l.create_revision, l.deleted, l.value, l.prev_revision,
             CASE WHEN p.deleted = 0 THEN p.value END AS prev_value
      FROM log l LEFT JOIN log p ON p.id = l.prev_revision
      WHERE l.id > ? AND +l.key >= ? AND +l.key < ?
      ORDER BY l.id LIMIT ?`)
    // Every row at or below the compaction point that a later row (also at or
    // below it) replaced is some row's prev_revision; rows up to the previous
    // compaction were handled then, so only newer rows need looking at.
    this.dropSuperseded = db.prepare(
      'DELETE FROM log WHERE id IN (SELECT prev_revision FROM log WHERE id > ? AND id <= ? AND prev_revision > 0)',
    )
    this.dropDeletions = db.prepare('DELETE FROM log WHERE id > ? AND id <= ? AND deleted = 1')
    this.recordCompacted = db.prepare("UPDATE meta SET value = ? WHERE name = 'compacted'")
    this.lastId = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'log'")
    this.compactedAt = db.prepare("SELECT value FROM meta WHERE name = 'compacted'")
    this.allChanges = db.prepare(`
      SELECT l.id, l.key, l.create_revision, l.deleted, l.value, l.prev_revision,
             CASE WHEN p.deleted = 0 THEN p.value END AS prev_value
      FROM log l LEFT JOIN log p ON p.id = l.prev_revision
      WHERE l.id > ? ORDER BY l.id LIMIT ?`)
  }

  /** The newest revision written, by any process (AUTOINCREMENT remembers it even when compaction removed its row). */
  lastRevision(): number {
    return Number(this.lastId.get()?.['seq'] ?? 0)
  }

  /** The revision the history was last compacted at, by any process. */
  compactedRevision(): number {
    return Number(this.compactedAt.get()?.['value'] ?? 0)
  }

  /** Up to `limit` rows after `revision` over every key, oldest first. */
  rowsAfter(revision: number, limit: number): ChangeRow[] {
    return this.allChanges.all(revision, limit).map(toChangeRow)
  }

  /** The key's newest row, a deletion included. */
  newest(key: string): LogRow | undefined {
    return toLogRow(this.newestOfKey.get(key))
  }

  /** The key's newest row at or below `revision`. */
  newestAt(key: string, revision: number): LogRow | undefined {
    return toLogRow(this.newestAtOrBelow.get(key, revision))
  }

  /** Up to `limit` live objects (newest row at `revision` not a deletion) in key order. */
  live(range: KeyRange, revision: number, limit: number): LogRow[] {
    return this.liveInRange.all(range.from, range.to, revision, revision, limit).map((r) => toLogRow(r)!)
  }

  countLive(range: KeyRange, revision: number): number {
    return Number(this.countLiveInRange.get(range.from, range.to, revision)?.['n'] ?? 0)
  }

  /** Appends the row for `revision`; the caller knows it is the next one (it is the only writer, or holds the write lock). */
  append(revision: number, key: string, createRevision: number, prevRevision: number, value: Uint8Array | null): void {
    this.insert.run(revision, key, createRevision, prevRevision, value === null ? 1 : 0, value)
  }

  /** The first `limit` rows after `revision` within the range, oldest first. */
  changesAfter(revision: number, range: KeyRange, limit: number): ChangeRow[] {
    return this.changes.all(revision, range.from, range.to, limit).map(toChangeRow)
  }

  /**
   * Removes history at or below `upTo` that no read at or after it can see,
   * keeping each live key's newest row, and records `upTo` as compacted. One
   * transaction: a crash leaves either the old or the new compacted state.
   */
  compact(previous: number, upTo: number): void {
    this.db.transaction(() => {
      this.dropSuperseded.run(previous, upTo)
      this.dropDeletions.run(previous, upTo)
      this.recordCompacted.run(upTo)
    })
  }
}

function toChangeRow(row: SqlRow): ChangeRow {
  return { ...toLogRow(row)!, prevRevision: Number(row['prev_revision']), prevValue: bytes(row['prev_value']) }
}

function toLogRow(row: SqlRow | undefined): LogRow | undefined {
  if (!row) return undefined
  return {
    revision: Number(row['id']),
    key: String(row['key']),
    createRevision: Number(row['create_revision']),
    deleted: Number(row['deleted']) !== 0,
    value: bytes(row['value']),
  }
}

function bytes(value: unknown): Uint8Array | null {
  return value instanceof Uint8Array ? value : null
}
