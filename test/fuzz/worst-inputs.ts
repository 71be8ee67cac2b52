/**
 * The most expensive requests the fuzz suite knows: each one aims at a bound
 * (body size, nesting, aliases, patch operations and copies, selectors,
 * duplicate keys, CEL whose work grows while it runs: cel-attacks.ts). The
 * fuzz suite sends them as fixed examples; the benchmark sends them while it
 * measures another client's GETs.
 */
import { celAttackRequests } from './cel-attacks.js'

export interface FuzzRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: string | Uint8Array
}

export const CONFIGMAPS = '/api/v1/namespaces/default/configmaps'
export const THINGS = '/apis/fuzz.example.com/v1/namespaces/default/things'
const MiB = 1024 * 1024

const json = { 'content-type': 'application/json' }
const yaml = { 'content-type': 'application/yaml' }

function patchOf(path: string, type: string, body: string): FuzzRequest {
  return { method: 'PATCH', path, headers: { 'content-type': type }, body }
}

/**
 * A flat map of many keys in YAML: the duplicate-key check must stay linear.
 * Its values are quoted, so that the full decoder reads it: a map of plain
 * values is read line by line (yaml-simple.ts) in a small part of the time.
 */
function manyYamlKeys(count: number): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: many-keys', 'data:']
  for (let i = 0; i < count; i++) lines.push(`  k${i}: "v"`)
  return `${lines.join('\n')}\n`
}

function billionLaughs(): string {
  let text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\nx0: &x0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
  for (let i = 1; i < 10; i++) text += `x${i}: &x${i} [${Array(9).fill(`*x${i - 1}`).join(',')}]\n`
  return text
}

/** The requests, built fresh each time (bodies are megabytes: build them once and reuse the list). */
export function worstInputs(): Array<{ name: string; request: FuzzRequest }> {
  const deepJson = `{"metadata":{"name":"deep"},"data":${'['.repeat(MiB)}${']'.repeat(MiB)}}`
  const copyDoubling = JSON.stringify(Array.from({ length: 64 }, (_, i) => ({ op: 'copy', from: '/spec', path: `/spec/c${i}` })))
  const tooManyOps = JSON.stringify(Array(10001).fill({ op: 'test', path: '/metadata/name', value: 'seed-0' }))
  const manyTerms = Array.from({ length: 20000 }, (_, i) => `k${i}!=v`).join(',')
  const longSetSelector = `k in (${Array.from({ length: 50000 }, (_, i) => `v${i}`).join(',')})`
  return [
    { name: 'body over the limit', request: { method: 'POST', path: CONFIGMAPS, headers: json, body: `{"metadata":{"name":"big"},"data":{"a":"${'x'.repeat(3 * MiB)}"}}` } },
    // Decoding text of two-byte characters costs ten times ASCII's: 2.8 MiB of it, then refused for its size (ConfigMap data is at most 1 MiB).
    { name: 'JSON of two-byte characters near the limit', request: { method: 'POST', path: CONFIGMAPS, headers: json, body: `{"metadata":{"name":"wide"},"data":{"a":"${'é'.repeat(1.4 * MiB)}"}}` } },
    { name: 'JSON nested a million levels', request: { method: 'POST', path: CONFIGMAPS, headers: json, body: deepJson } },
    { name: 'YAML nested a million levels', request: { method: 'POST', path: CONFIGMAPS, headers: yaml, body: deepJson } },
    { name: 'YAML alias bomb', request: { method: 'POST', path: CONFIGMAPS, headers: yaml, body: billionLaughs() } },
    { name: 'YAML with 20000 keys', request: { method: 'POST', path: CONFIGMAPS, headers: yaml, body: manyYamlKeys(20000) } },
    { name: 'JSON patch of 10001 operations', request: patchOf(`${CONFIGMAPS}/seed-0`, 'application/json-patch+json', tooManyOps) },
    { name: 'JSON patch doubling by copies', request: patchOf(`${THINGS}/seed-0`, 'application/json-patch+json', copyDoubling) },
    { name: 'merge patch nested a million levels', request: patchOf(`${CONFIGMAPS}/seed-0`, 'application/merge-patch+json', deepJson) },
    { name: 'label selector of 20000 terms', request: { method: 'GET', path: `${CONFIGMAPS}?labelSelector=${encodeURIComponent(manyTerms)}`, headers: {} } },
    { name: 'label selector with a 50000-value set', request: { method: 'GET', path: `${CONFIGMAPS}?labelSelector=${encodeURIComponent(longSetSelector)}`, headers: {} } },
    {
      name: 'field selector of 20000 terms',
      request: { method: 'GET', path: `${CONFIGMAPS}?fieldSelector=${encodeURIComponent(Array(20000).fill('metadata.name!=x').join(','))}`, headers: {} },
    },
    ...celAttackRequests(),
  ]
}
