/**
 * What the managedFields suites share: kubectl steps that must succeed
 * without a warning, manifests written to the daemon's directory, objects
 * read with their managedFields, and entries compared field by field with
 * the ones written down in the tests.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Daemon } from './daemon.js'

let d: Daemon

/** The daemon the helpers below drive. */
export function useDaemon(daemon: Daemon): void {
  d = daemon
}

/** Runs kubectl; the step must succeed with exactly `stdout` and print no warning. */
export async function step(stdout: string, ...args: string[]): Promise<void> {
  const r = await d.kubectl(...args)
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}`)
  assert.equal(r.stderr, '', `kubectl ${args.join(' ')} warned`)
  assert.equal(r.stdout, stdout)
}

export function manifest(name: string, text: string): string {
  const file = join(d.dir, name)
  writeFileSync(file, text)
  return file
}

export interface Entry {
  manager: string
  operation: 'Apply' | 'Update'
  apiVersion: string
  fieldsType: 'FieldsV1'
  fieldsV1: Record<string, unknown>
  subresource?: string
  time?: string
}

export type Obj = Record<string, unknown> & {
  metadata: { managedFields?: Entry[]; annotations?: Record<string, string>; labels?: Record<string, string> }
}

export async function read(...target: string[]): Promise<Obj> {
  const r = await d.kubectl('get', ...target, '--show-managed-fields', '-o', 'json')
  assert.equal(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as Obj
}

/** What an entry should be; `time` says whether it carries one (its value is the clock's). */
export type Expected = Omit<Entry, 'fieldsType' | 'time'> & { time: boolean }

/** The entries in upstream's order, field by field; returns them for later comparisons of their times. */
export function assertEntries(obj: Obj, expected: Expected[]): Entry[] {
  const entries = obj.metadata.managedFields ?? []
  assert.deepEqual(
    entries.map(({ time, ...rest }) => ({ ...rest, time: time !== undefined })),
    expected.map((e) => ({ ...e, fieldsType: 'FieldsV1' })),
  )
  return entries
}

export function timeOf(entries: Entry[], manager: string, operation: string): string | undefined {
  return entries.find((e) => e.manager === manager && e.operation === operation)?.time
}

/** Every path of a FieldsV1 set, as `f:spec.f:tolerations`. */
export function paths(set: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(set).flatMap(([k, v]) => {
    const here = prefix ? `${prefix}.${k}` : k
    return [here, ...paths(v as Record<string, unknown>, here)]
  })
}

export const LAST_APPLIED = { 'f:metadata': { 'f:annotations': { 'f:kubectl.kubernetes.io/last-applied-configuration': {} } } }

