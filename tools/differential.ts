/**
 * Upstream's answers beside this server's, request by request: starts a
 * real kube-apiserver (the binary given, on a fresh etcd, with envtest's
 * files and flags) and this tree's server in process, sends both the same
 * requests as the admin and prints each one whose status code or message
 * differs. What the conformance suite does not ask, this does: every
 * built-in kind's validation, field by field.
 *
 *   node --import tsx tools/differential.ts --upstream KUBE_APISERVER [--suite S]... [--only REGEX] [--port N]
 *
 * Suites (all by default):
 *   creates    each catalogue sample (test/integration/catalogue-samples.ts),
 *              then each of its fields dropped, emptied or of another type,
 *              and its metadata made invalid, as dry-run creates;
 *   updates    the same mutations as dry-run PUTs of the stored object, and
 *              the update-only ones (name, uid, resourceVersion, generation);
 *   status     invalid status fields written through `/status`, for each
 *              sample whose resource has that subresource;
 *   selectors  field selectors on every list both serve;
 *   defaults   each sample as it is, created (dry run) on both: the objects
 *              answered compared field by field (defaults, fields kept or
 *              dropped), but for names, uids, times and allocated addresses;
 *   reads      lists, GETs and watches with each query parameter a client
 *              may send, alone and in the pairs that conflict;
 *   patches    each patch type with malformed, refused and odd bodies and
 *              options, on a ConfigMap and a Deployment;
 *   deletes    DeleteOptions in the query and the body, of one object and
 *              of a collection;
 *   subresources  a Deployment's scale read and written, status writes of
 *              objects that are not there, unknown subresources;
 *   tables     each sample created, its list read as a Table (what kubectl
 *              get prints): the columns and the first row compared, but
 *              for ages, addresses and what controllers change;
 *   paths      each verb on paths whose namespace, name or group segment
 *              holds an escape that does not decode;
 *   options    a ConfigMap read as a Table of each version with each
 *              includeObject, and server-side apply conflicts between
 *              managers, forced or not;
 *   media      bodies of each content type and answers asked for with
 *              each Accept header, on every verb.
 *
 * `--only` keeps the samples whose `group/version/resource` matches. An
 * older upstream binary differs where upstream changed since (its JSON
 * decoding messages, int32 overflow, kinds and groups it no longer serves):
 * read each difference against the upstream source of the release the
 * server emulates before changing anything. Needs etcd on the PATH.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ADMIN_IDENTITY, type ApiServer, createApiServer } from '../core/index.js'
import { SAMPLES } from '../test/integration/catalogue-samples.js'
import { prepareEnvtest } from '../test/e2e/harnesses.js'
import { EtcdServer } from '../test/storage-contract/etcd-server.js'

type Json = Record<string, unknown>
interface Answer {
  status: number
  body: Json | undefined
  /** The answer as sent: a watch's is one JSON document per event. */
  text: string
}
/** One request; a body of text goes as it is, with `contentType` (JSON by default). */
type Call = (method: string, path: string, body?: unknown, contentType?: string, accept?: string) => Promise<Answer>

const record = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {})
const parse = (text: string): Json | undefined => {
  try {
    return record(JSON.parse(text))
  } catch {
    return undefined
  }
}
const messageOf = (a: Answer): string => String(a.body?.['message'] ?? '')

/** Upstream's binary on a fresh etcd, reached over TLS with envtest's admin certificate. */
async function startUpstream(binary: string, port: number): Promise<{ call: Call; stop: () => Promise<void> }> {
  const etcd = await EtcdServer.start()
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-differential-'))
  const setup = await prepareEnvtest(join(dir, 'pki'), { address: '127.0.0.1', port, etcdUrl: etcd.clientUrl })
  const child: ChildProcess = spawn(binary, [...setup.args, '--insecure-port=0'], { stdio: 'ignore' })
  const call: Call = (method, path, body, contentType = 'application/json', accept = 'application/json') =>
    new Promise((done, fail) => {
      const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
      // A length for every body: Node sends a DELETE's unframed otherwise, which Go reads as the next request.
      const headers = { accept, ...(data !== undefined ? { 'content-type': contentType, 'content-length': String(Buffer.byteLength(data)) } : {}) }
      const req = httpsRequest({ host: '127.0.0.1', port, method, path, headers, ca: setup.servingCa, cert: setup.admin.certificate, key: setup.admin.privateKey }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          done({ status: res.statusCode ?? 0, body: parse(text), text })
        })
      })
      req.on('error', fail)
      req.end(data)
    })
  const stop = async () => {
    child.kill('SIGKILL')
    await etcd.destroy()
    rmSync(dir, { recursive: true, force: true })
  }
  for (let i = 0; ; i++) {
    // Ready, and its bootstrap controller has made the namespace the suites write in.
    const ready = await call('GET', '/readyz').catch(() => undefined)
    if (ready?.status === 200 && (await call('GET', '/api/v1/namespaces/default')).status === 200) break
    if (i > 600) {
      await stop()
      throw new Error(`${binary} did not become ready on port ${port}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return { call, stop }
}

/** This tree's server in process, on its memory store, called as the admin. */
async function startOurs(): Promise<{ call: Call; server: ApiServer }> {
  const server = createApiServer({ embeddedIdentity: ADMIN_IDENTITY })
  await server.ready
  const call: Call = async (method, path, body, contentType = 'application/json', accept = 'application/json') => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    const headers = { accept, ...(data !== undefined ? { 'content-type': contentType } : {}) }
    const res = await server.fetch(new Request(`http://in-process${path}`, { method, headers, ...(data !== undefined ? { body: data } : {}) }))
    const text = await res.text()
    return { status: res.status, body: parse(text), text }
  }
  return { call, server }
}

/** One change to an object, named for the report. */
type Mutation = [string, (obj: Json) => void]

/** Each field of `obj` dropped, emptied, given another type; nested objects and a list's first item likewise. */
function fieldMutations(obj: Json, path: string[] = []): Mutation[] {
  const out: Mutation[] = []
  for (const [key, value] of Object.entries(obj)) {
    const at = [...path, key]
    const name = at.join('.')
    const parent = (o: Json): Json => at.slice(0, -1).reduce((x: Json, k) => record(Array.isArray(x) ? x[Number(k)] : x[k]), o)
    const set = (v: unknown) => (o: Json) => void (parent(o)[key] = v)
    out.push([`drop ${name}`, (o) => void delete parent(o)[key]])
    if (typeof value === 'string') out.push([`${name}=""`, set('')], [`${name}=7`, set(7)], [`${name}="Bad_Value!"`, set('Bad_Value!')])
    else if (typeof value === 'number') out.push([`${name}=-1`, set(-1)], [`${name}=0`, set(0)], [`${name}="x"`, set('x')])
    else if (typeof value === 'boolean') out.push([`${name}="yes"`, set('yes')])
    else if (Array.isArray(value)) {
      out.push([`${name}=[]`, set([])], [`${name}={}`, set({})])
      const first: unknown = value[0]
      if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
        out.push([`${name} twice`, set([first, first])])
        out.push(...fieldMutations(first as Json, [...at, '0']))
      }
    } else if (value !== null && typeof value === 'object') {
      out.push([`${name}={}`, set({})], [`${name}="s"`, set('s')])
      out.push(...fieldMutations(value as Json, at))
    }
  }
  return out
}

const meta = (o: Json): Json => record(o['metadata'])
const METADATA_MUTATIONS: Mutation[] = [
  ['name Bad_Name', (o) => void (meta(o)['name'] = 'Bad_Name')],
  ['no name', (o) => void delete meta(o)['name']],
  ['label bad key', (o) => void (meta(o)['labels'] = { 'bad key!': 'v' })],
  ['label long value', (o) => void (meta(o)['labels'] = { a: 'x'.repeat(64) })],
  ['annotation empty key', (o) => void (meta(o)['annotations'] = { '': 'v' })],
  ['finalizer bad', (o) => void (meta(o)['finalizers'] = ['bad finalizer'])],
  ['finalizer unqualified', (o) => void (meta(o)['finalizers'] = ['cleanup'])],
  ['ownerRef empty', (o) => void (meta(o)['ownerReferences'] = [{}])],
]
const UPDATE_MUTATIONS: Mutation[] = [
  ['name changed', (o) => void (meta(o)['name'] = 'other')],
  ['uid changed', (o) => void (meta(o)['uid'] = '00000000-0000-0000-0000-000000000000')],
  ['no resourceVersion', (o) => void delete meta(o)['resourceVersion']],
  ['generation lowered', (o) => void (meta(o)['generation'] = -1)],
]

interface Tally {
  same: number
  differ: number
}

/** Sends one request to both; prints it when their answers differ (a success is compared by its code alone). */
async function compare(tally: Tally, what: string, up: Call, ours: Call, method: string, path: string, body?: unknown): Promise<void> {
  const [a, b] = await Promise.all([up(method, path, body), ours(method, path, body === undefined ? undefined : structuredClone(body))])
  if (a.status === b.status && (a.status < 300 || messageOf(a) === messageOf(b))) {
    tally.same++
    return
  }
  tally.differ++
  console.log(`\n${what}\n  upstream ${a.status} ${messageOf(a)}\n  ours     ${b.status} ${messageOf(b)}`)
}

/** Where each sample lives on upstream's server, or undefined when it serves no such resource. */
async function collectionOf(up: Call, gvr: string): Promise<{ path: string; apiVersion: string; kind: string } | undefined> {
  const [group = '', version = '', resource = ''] = gvr.split('/')
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`
  const resources = (await up('GET', base)).body?.['resources']
  const found = (Array.isArray(resources) ? resources : []).map(record).find((r) => r['name'] === resource)
  if (!found) return undefined
  return { path: `${base}${found['namespaced'] ? '/namespaces/default' : ''}/${resource}`, apiVersion: group ? `${group}/${version}` : version, kind: String(found['kind']) }
}

/** The sample POSTed to both (for real), with its collection and both answers. */
async function createdOnBoth(up: Call, ours: Call, coll: { path: string; apiVersion: string; kind: string }, sample: (typeof SAMPLES)[number]): Promise<[Answer, Answer]> {
  const body: Json = { apiVersion: coll.apiVersion, kind: coll.kind, ...structuredClone(sample.body) }
  return Promise.all([up('POST', coll.path, body), ours('POST', coll.path, structuredClone(body))])
}

async function creates(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  for (const sample of SAMPLES) {
    if (only && !only.test(sample.gvr)) continue
    const coll = await collectionOf(up, sample.gvr)
    if (!coll) continue
    for (const [what, mutate] of [['as is', () => {}] as Mutation, ...METADATA_MUTATIONS, ...fieldMutations(sample.body)]) {
      const body: Json = { apiVersion: coll.apiVersion, kind: coll.kind, ...structuredClone(sample.body) }
      mutate(body)
      await compare(tally, `create ${sample.gvr}: ${what}`, up, ours, 'POST', `${coll.path}?dryRun=All`, body)
    }
  }
}

async function updates(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  for (const sample of SAMPLES) {
    if (only && !only.test(sample.gvr)) continue
    const coll = await collectionOf(up, sample.gvr)
    if (!coll) continue
    const [a, b] = await createdOnBoth(up, ours, coll, sample)
    if (a.status !== 201 || b.status !== 201) {
      console.log(`\nupdate ${sample.gvr}: not created (upstream ${a.status} ${messageOf(a)}; ours ${b.status} ${messageOf(b)})`)
      continue
    }
    const item = `${coll.path}/${String(meta(a.body ?? {})['name'])}?dryRun=All`
    const mutations = [['as is', () => {}] as Mutation, ...UPDATE_MUTATIONS, ...METADATA_MUTATIONS.filter(([w]) => !w.includes('name')), ...fieldMutations(sample.body).filter(([w]) => !w.includes('metadata'))]
    for (const [what, mutate] of mutations) {
      // Each side's own stored object, changed alike.
      const stored = [structuredClone(a.body ?? {}), structuredClone(b.body ?? {})]
      try {
        stored.forEach(mutate)
      } catch {
        continue
      }
      const [x, y] = await Promise.all([up('PUT', item, stored[0]), ours('PUT', item, stored[1])])
      if (x.status === y.status && (x.status < 300 || messageOf(x) === messageOf(y))) {
        tally.same++
        continue
      }
      tally.differ++
      console.log(`\nupdate ${sample.gvr}: ${what}\n  upstream ${x.status} ${messageOf(x)}\n  ours     ${y.status} ${messageOf(y)}`)
    }
  }
}

/** Status fields set to what no status may hold, each written through `/status`. */
const STATUS_MUTATIONS: Mutation[] = [
  ['status.replicas=-1', (s) => void (s['replicas'] = -1)],
  ['status.readyReplicas=-1', (s) => void (s['readyReplicas'] = -1)],
  ['status.availableReplicas=5', (s) => void (s['availableReplicas'] = 5)],
  ['status.observedGeneration=-1', (s) => void (s['observedGeneration'] = -1)],
  ['status.collisionCount=-1', (s) => void (s['collisionCount'] = -1)],
  ['status.conditions=[{}]', (s) => void (s['conditions'] = [{}])],
  ['status.phase="Bad"', (s) => void (s['phase'] = 'Bad')],
  ['status.podIP="x"', (s) => void (s['podIP'] = 'x')],
  ['status.nominatedNodeName="Bad_Name"', (s) => void (s['nominatedNodeName'] = 'Bad_Name')],
  ['status.loadBalancer bad ip', (s) => void (s['loadBalancer'] = { ingress: [{ ip: 'x' }] })],
  ['status.succeeded=-1', (s) => void (s['succeeded'] = -1)],
  ['status.currentReplicas=-1', (s) => void (s['currentReplicas'] = -1)],
  ['status.numberReady=-1', (s) => void (s['numberReady'] = -1)],
]

async function status(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  for (const sample of SAMPLES) {
    if (only && !only.test(sample.gvr)) continue
    const coll = await collectionOf(up, sample.gvr)
    const [group = '', version = '', resource = ''] = sample.gvr.split('/')
    const resources = (await up('GET', group ? `/apis/${group}/${version}` : `/api/${version}`)).body?.['resources']
    if (!coll || !(Array.isArray(resources) ? resources : []).some((r) => record(r)['name'] === `${resource}/status`)) continue
    const [a, b] = await createdOnBoth(up, ours, coll, sample)
    if (a.status !== 201 || b.status !== 201) continue
    const item = `${coll.path}/${String(meta(a.body ?? {})['name'])}`
    for (const [what, mutate] of STATUS_MUTATIONS) {
      // Each side's object as it is now (controllers may have written its status since).
      const [x, y] = await Promise.all([up('GET', item), ours('GET', item)])
      const bodies = [x.body ?? {}, y.body ?? {}].map((o) => {
        o['status'] = record(o['status'])
        mutate(o['status'] as Json)
        return o
      })
      const path = `${item}/status?dryRun=All`
      const [p, q] = await Promise.all([up('PUT', path, bodies[0]), ours('PUT', path, bodies[1])])
      if (p.status === q.status && (p.status < 300 || messageOf(p) === messageOf(q))) {
        tally.same++
        continue
      }
      tally.differ++
      console.log(`\nstatus ${sample.gvr}: ${what}\n  upstream ${p.status} ${messageOf(p)}\n  ours     ${q.status} ${messageOf(q)}`)
    }
  }
}

const SELECTED_FIELDS = ['metadata.name', 'metadata.namespace', 'status.phase', 'spec.nodeName', 'type', 'involvedObject.kind', 'spec.signerName', 'spec.foo']

async function selectors(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  const groups = record((await up('GET', '/apis')).body)['groups']
  const versions = ['/api/v1', ...(Array.isArray(groups) ? groups : []).map((g) => `/apis/${String(record(record(g)['preferredVersion'])['groupVersion'])}`)]
  for (const gv of versions) {
    const resources = (await up('GET', gv)).body?.['resources']
    for (const r of (Array.isArray(resources) ? resources : []).map(record)) {
      const name = String(r['name'])
      const verbs = Array.isArray(r['verbs']) ? r['verbs'] : []
      if (name.includes('/') || !verbs.includes('list') || (only && !only.test(`${gv}/${name}`))) continue
      for (const field of SELECTED_FIELDS) {
        const path = `${gv}/${name}?fieldSelector=${encodeURIComponent(`${field}=x`)}`
        await compare(tally, `list ${path}`, up, ours, 'GET', path)
      }
    }
  }
}

/** Fields whose values two servers give apart by nature: identities, times, allocations. */
const VOLATILE_FIELDS = new Set([
  'metadata.uid',
  'metadata.resourceVersion',
  'metadata.creationTimestamp',
  'metadata.managedFields',
  'metadata.generateName',
  'metadata.name',
  'spec.clusterIP',
  'spec.clusterIPs',
  'spec.ports.0.nodePort',
  'spec.healthCheckNodePort',
])

/** The field paths where `a` (upstream's) and `b` (ours) differ, each with both values. */
function fieldDifferences(a: unknown, b: unknown, path = ''): string[] {
  if (VOLATILE_FIELDS.has(path)) return []
  const isRecord = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)
  const at = (key: string) => (path ? `${path}.${key}` : key)
  if (isRecord(a) && isRecord(b)) return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) => fieldDifferences(a[k], b[k], at(k)))
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.flatMap((item, i) => fieldDifferences(item, b[i], at(String(i))))
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [`${path}: upstream ${JSON.stringify(a) ?? 'absent'}, ours ${JSON.stringify(b) ?? 'absent'}`]
}

/** Each sample created as it is (dry run) on both; the objects answered compared field by field: defaults, kept and dropped fields. */
async function defaults(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  for (const sample of SAMPLES) {
    if (only && !only.test(sample.gvr)) continue
    const coll = await collectionOf(up, sample.gvr)
    if (!coll) continue
    const body: Json = { apiVersion: coll.apiVersion, kind: coll.kind, ...structuredClone(sample.body) }
    const [a, b] = await Promise.all([up('POST', `${coll.path}?dryRun=All`, body), ours('POST', `${coll.path}?dryRun=All`, structuredClone(body))])
    if (a.status !== 201 || b.status !== 201) {
      tally.differ++
      console.log(`\ndefaults ${sample.gvr}: not created (upstream ${a.status} ${messageOf(a)}; ours ${b.status} ${messageOf(b)})`)
      continue
    }
    const found = fieldDifferences(a.body, b.body)
    if (found.length === 0) {
      tally.same++
      continue
    }
    tally.differ++
    console.log(`\ndefaults ${sample.gvr}:\n  ${found.join('\n  ')}`)
  }
}

/** Resource versions and counts differ between the two servers: a message is compared with its numbers blanked. */
const withoutNumbers = (text: string): string => text.replace(/\d+/g, '#')

/** The first event of a watch's answer (its type, and an ERROR's code and message), or the Status of a refusal. */
function firstEvent(a: Answer): string {
  const line = a.text.split('\n')[0] ?? ''
  const event = parse(line)
  if (!event || !('type' in event)) return `${a.status} ${withoutNumbers(messageOf(a))}`
  const object = record(event['object'])
  return `${a.status} ${String(event['type'])}${event['type'] === 'ERROR' ? ` ${String(object['code'])} ${withoutNumbers(String(object['message']))}` : ''}`
}

const CONFIG_MAPS = '/api/v1/namespaces/default/configmaps'

/** Query parameters of a list, each alone or in the pairs that conflict. */
const LIST_QUERIES = [
  ...['0', '1', 'abc', '-1', '99999999999', '18446744073709551616', ''].map((rv) => `resourceVersion=${rv}`),
  ...['Exact', 'NotOlderThan', 'Bogus', ''].flatMap((m) => [`resourceVersionMatch=${m}`, `resourceVersionMatch=${m}&resourceVersion=0`, `resourceVersionMatch=${m}&resourceVersion=1`]),
  ...['0', '-1', 'abc', '1', '99999999999999999999'].map((l) => `limit=${l}`),
  'limit=1&resourceVersion=0',
  'limit=1&resourceVersion=1',
  'limit=1&resourceVersion=1&resourceVersionMatch=Exact',
  ...['abc', 'eyJ9', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0', 'eyJ2IjoieCIsInJ2IjoxLCJzdGFydCI6IngifQ', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoieCJ9'].flatMap((c) => [`continue=${c}`, `continue=${c}&limit=1`, `continue=${c}&resourceVersion=0`]),
  ...['abc', '-1', '0'].map((t) => `timeoutSeconds=${t}`),
  ...['a in (', 'a=b,', '!', 'a==b==c', 'a in (b', 'a notin b', 'a=' + 'x'.repeat(64), '@=b', 'a!=', 'a,b'].map((l) => `labelSelector=${encodeURIComponent(l)}`),
  ...['metadata.name', 'a=b', 'metadata.name==x', 'metadata.name=x,', 'metadata.name!=', '=x', 'metadata.name=x=y'].map((f) => `fieldSelector=${encodeURIComponent(f)}`),
  ...['pretty=abc', 'allowWatchBookmarks=abc', 'watch=abc&timeoutSeconds=1', 'watch=false', 'includeUninitialized=true', 'export=true', 'sendInitialEvents=true', 'sendInitialEvents=abc'],
]

/** Query parameters of a GET of one object. */
const GET_QUERIES = ['resourceVersion=0', 'resourceVersion=1', 'resourceVersion=abc', 'resourceVersion=99999999999', 'resourceVersionMatch=Exact', 'resourceVersionMatch=Exact&resourceVersion=1', 'limit=1', 'watch=true&timeoutSeconds=1', 'pretty=1', 'export=true']

/** Query parameters of a watch, each ended by the server after a second. */
const WATCH_QUERIES = ['', 'resourceVersion=0', 'resourceVersion=1', 'resourceVersion=abc', 'resourceVersion=99999999999', 'allowWatchBookmarks=true', 'resourceVersionMatch=NotOlderThan', 'resourceVersionMatch=Exact&resourceVersion=1', 'limit=1', 'continue=abc', 'fieldSelector=a%3Db', 'labelSelector=a%20in%20(']

/** Lists, GETs and watches with each query parameter (and pair) a client may send, valid or not. */
async function reads(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  if (only && !only.test('/v1/configmaps')) return
  for (const call of [up, ours]) for (let i = 1; i <= 3; i++) await call('POST', CONFIG_MAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `read-${i}` }, data: { n: String(i) } })
  const compareReads = async (what: string, path: string, summary: (a: Answer) => string) => {
    const [a, b] = await Promise.all([up('GET', path), ours('GET', path)])
    const [x, y] = [summary(a), summary(b)]
    if (x === y) {
      tally.same++
      return
    }
    tally.differ++
    console.log(`\n${what} ${path}\n  upstream ${x}\n  ours     ${y}`)
  }
  const listSummary = (a: Answer) => (a.status === 200 ? `200 ${Array.isArray(a.body?.['items']) ? (a.body['items'] as unknown[]).length : '?'} items${record(a.body?.['metadata'])['continue'] ? ', continue' : ''}` : `${a.status} ${withoutNumbers(messageOf(a))}`)
  const statusSummary = (a: Answer) => `${a.status}${a.status >= 300 ? ` ${withoutNumbers(messageOf(a))}` : ''}`
  for (const query of LIST_QUERIES) await compareReads('list', `${CONFIG_MAPS}?${query}`, listSummary)
  for (const query of LIST_QUERIES.filter((q) => !q.includes('continue'))) await compareReads('list', `/api/v1/namespaces?${query}`, listSummary)
  for (const query of GET_QUERIES) await compareReads('get', `${CONFIG_MAPS}/read-1?${query}`, query.startsWith('watch') ? firstEvent : statusSummary)
  await compareReads('get', `${CONFIG_MAPS}/missing`, statusSummary)
  await compareReads('get', `/api/v1/namespaces/missing/configmaps/missing`, statusSummary)
  for (const query of WATCH_QUERIES) await compareReads('watch', `${CONFIG_MAPS}?watch=1&timeoutSeconds=1${query ? `&${query}` : ''}`, firstEvent)
}

const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const

/** Patch bodies, each sent as each patch type: most are refused, and how. */
const PATCH_BODIES = [
  '',
  'null',
  '[]',
  '{}',
  'not json',
  '"text"',
  '[{"op":"bogus","path":"/data/a"}]',
  '[{"op":"add"}]',
  '[{"op":"add","path":"/data/x"}]',
  '[{"op":"replace","path":"/data/missing","value":"x"}]',
  '[{"op":"remove","path":"/nope"}]',
  '[{"op":"test","path":"/data/a","value":"other"}]',
  '[{"op":"move","from":"/data/nope","path":"/data/b"}]',
  '[{"op":"copy","from":"/data/a","path":"/data/a/b"}]',
  '[{"op":"add","path":"/metadata/name","value":"other"}]',
  '[{"op":"add","path":"/kind","value":"Secret"}]',
  '[{"op":"add","path":"/data/~2","value":"x"}]',
  '[{"op":"add","path":"data/a","value":"x"}]',
  '{"metadata":{"name":"other"}}',
  '{"metadata":{"namespace":"other"}}',
  '{"apiVersion":"v2"}',
  '{"kind":"Secret"}',
  '{"data":{"a":1}}',
  '{"data":"s"}',
  '{"$patch":"delete"}',
  '{"$patch":"bogus"}',
  '{"data":{"$patch":"replace"}}',
  '{"metadata":{"resourceVersion":"1"}}',
  '{"metadata":{"uid":"x"}}',
  '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"patched"},"data":{"a":"2"}}',
  '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}',
  '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"patched"}}',
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: patched\ndata:\n  a: [',
]

/** Patches of a Deployment's containers that strategic merge refuses. */
const DEPLOYMENT_PATCHES = [
  '{"spec":{"template":{"spec":{"containers":[{"$patch":"delete"}]}}}}',
  '{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}',
  '{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"x"}]}}}}',
  '{"spec":{"template":{"spec":{"$setElementOrder/containers":"x"}}}}',
  '{"spec":{"template":{"spec":{"$deleteFromPrimitiveList/containers":["x"]}}}}',
  '{"spec":{"template":{"spec":{"$retainKeys":"x"}}}}',
  '{"spec":{"template":{"spec":{"$retainKeys":["bogus"]}}}}',
  '{"spec":{"template":{"spec":{"containers":{"$patch":"replace"}}}}}',
  '{"spec":{"replicas":"x"}}',
  '{"spec":{"selector":{"matchLabels":{"app":"other"}}}}',
]

const PATCH_QUERIES = ['', 'fieldManager=', `fieldManager=${'m'.repeat(129)}`, 'force=true', 'force=abc', 'dryRun=Bogus', 'fieldManager=m&force=true']

/** Each patch type with each body and query parameter, on a ConfigMap and a Deployment. */
async function patches(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'patched' },
    spec: { selector: { matchLabels: { app: 'p' } }, template: { metadata: { labels: { app: 'p' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  }
  for (const call of [up, ours]) {
    await call('POST', CONFIG_MAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patched' }, data: { a: '1' } })
    await call('POST', '/apis/apps/v1/namespaces/default/deployments', deployment)
  }
  const send = async (what: string, path: string, body: string, type: string) => {
    const [a, b] = await Promise.all([up('PATCH', path, body, type), ours('PATCH', path, body, type)])
    if (a.status === b.status && (a.status < 300 || messageOf(a) === messageOf(b))) {
      tally.same++
      return
    }
    tally.differ++
    console.log(`\n${what} ${path} ${JSON.stringify(body)}\n  upstream ${a.status} ${messageOf(a)}\n  ours     ${b.status} ${messageOf(b)}`)
  }
  for (const [name, type] of Object.entries(PATCH_TYPES)) {
    if (only && !only.test(`/v1/configmaps ${name}`)) continue
    for (const query of PATCH_QUERIES) {
      const bodies = query ? ['{"data":{"a":"2"}}', '[{"op":"replace","path":"/data/a","value":"2"}]', PATCH_BODIES.at(-4) ?? ''] : PATCH_BODIES
      for (const body of bodies) await send(`patch (${name})`, `${CONFIG_MAPS}/patched?dryRun=All${query ? `&${query}` : ''}${name === 'apply' && !query.includes('fieldManager') ? '&fieldManager=m' : ''}`, body, type)
    }
    if (name === 'strategic' || name === 'apply') for (const body of DEPLOYMENT_PATCHES) await send(`patch (${name})`, `/apis/apps/v1/namespaces/default/deployments/patched?dryRun=All&fieldManager=m`, body, type)
  }
  await send('patch (unknown type)', `${CONFIG_MAPS}/patched?dryRun=All`, '{}', 'application/bogus')
  await send('patch (missing object)', `${CONFIG_MAPS}/missing?dryRun=All`, '{"data":{"a":"2"}}', PATCH_TYPES.merge)
}

/** DeleteOptions a client may send, in the query or the body, valid or not. */
const DELETE_VARIANTS: [string, string, unknown][] = [
  ['plain', '', undefined],
  ['propagationPolicy=Bogus', '?propagationPolicy=Bogus', undefined],
  ['gracePeriodSeconds=-5', '?gracePeriodSeconds=-5', undefined],
  ['gracePeriodSeconds=abc', '?gracePeriodSeconds=abc', undefined],
  ['dryRun=Bogus', '?dryRun=Bogus', undefined],
  ['orphan and propagation', '?orphanDependents=true&propagationPolicy=Foreground', undefined],
  ['body: wrong kind', '', { kind: 'Pod', apiVersion: 'v1' }],
  ['body: wrong apiVersion', '', { kind: 'DeleteOptions', apiVersion: 'v9' }],
  ['body: not an object', '', '[1]'],
  ['body: not JSON', '', 'not json'],
  ['body: bad propagation', '', { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Sideways' }],
  ['body: uid precondition', '', { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } }],
  ['body: resourceVersion precondition', '', { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } }],
  ['body: gracePeriodSeconds string', '', { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 'x' }],
  ['body and query both', '?gracePeriodSeconds=1', { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 2 }],
]

/** Deletes of one object and of a collection with each DeleteOptions variant, all as dry runs but for the missing object. */
async function deletes(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  if (only && !only.test('/v1/configmaps')) return
  for (const call of [up, ours]) await call('POST', CONFIG_MAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deleted' } })
  for (const [what, query, body] of DELETE_VARIANTS) {
    const dry = query ? `${query}&dryRun=All` : '?dryRun=All'
    const withDry = what.startsWith('dryRun') ? query : dry
    await compare(tally, `delete (${what})`, up, ours, 'DELETE', `${CONFIG_MAPS}/deleted${withDry}`, body)
    await compare(tally, `delete collection (${what})`, up, ours, 'DELETE', `${CONFIG_MAPS}${withDry}&labelSelector=none%3Dnone`, body)
  }
  await compare(tally, 'delete (missing)', up, ours, 'DELETE', `${CONFIG_MAPS}/missing`)
  await compare(tally, 'delete (missing namespace)', up, ours, 'DELETE', '/api/v1/namespaces/missing/configmaps/x')
}

/** The scale subresource's reads and writes, valid or not, and status writes of objects that are not there. */
async function subresources(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  if (only && !only.test('apps/v1/deployments')) return
  const deployments = '/apis/apps/v1/namespaces/default/deployments'
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'scaled' },
    spec: { replicas: 1, selector: { matchLabels: { app: 's' } }, template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  }
  for (const call of [up, ours]) await call('POST', deployments, deployment)
  const scale = `${deployments}/scaled/scale`
  await compare(tally, 'get scale', up, ours, 'GET', scale)
  await compare(tally, 'get scale (missing)', up, ours, 'GET', `${deployments}/missing/scale`)
  const scales: [string, unknown][] = [
    ['replicas -1', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: 'default' }, spec: { replicas: -1 } }],
    ['replicas "x"', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: 'default' }, spec: { replicas: 'x' } }],
    ['other name', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'other', namespace: 'default' }, spec: { replicas: 2 } }],
    ['wrong kind', { apiVersion: 'autoscaling/v1', kind: 'Deployment', metadata: { name: 'scaled', namespace: 'default' }, spec: { replicas: 2 } }],
    ['stale resourceVersion', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: 'default', resourceVersion: '1' }, spec: { replicas: 2 } }],
    ['no metadata', { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 2 } }],
  ]
  for (const [what, body] of scales) await compare(tally, `put scale (${what})`, up, ours, 'PUT', `${scale}?dryRun=All`, body)
  await compare(tally, 'put scale (missing)', up, ours, 'PUT', `${deployments}/missing/scale`, scales[0]?.[1])
  const patches: [string, string, string][] = [
    ['merge replicas -1', '{"spec":{"replicas":-1}}', PATCH_TYPES.merge],
    ['merge replicas "x"', '{"spec":{"replicas":"x"}}', PATCH_TYPES.merge],
    ['json replace replicas', '[{"op":"replace","path":"/spec/replicas","value":3}]', PATCH_TYPES.json],
    ['strategic replicas', '{"spec":{"replicas":3}}', PATCH_TYPES.strategic],
    ['merge status', '{"status":{"replicas":9}}', PATCH_TYPES.merge],
  ]
  for (const [what, body, type] of patches) {
    const [a, b] = await Promise.all([up('PATCH', `${scale}?dryRun=All`, body, type), ours('PATCH', `${scale}?dryRun=All`, body, type)])
    const same = a.status === b.status && (a.status < 300 ? JSON.stringify(record(a.body?.['spec'])) === JSON.stringify(record(b.body?.['spec'])) : messageOf(a) === messageOf(b))
    if (same) tally.same++
    else {
      tally.differ++
      console.log(`\npatch scale (${what})\n  upstream ${a.status} ${messageOf(a) || JSON.stringify(a.body?.['spec'])}\n  ours     ${b.status} ${messageOf(b) || JSON.stringify(b.body?.['spec'])}`)
    }
  }
  const missingStatus = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'missing' }, spec: deployment.spec, status: { replicas: 1 } }
  await compare(tally, 'put status (missing)', up, ours, 'PUT', `${deployments}/missing/status`, missingStatus)
  await compare(tally, 'patch status (missing)', up, ours, 'PATCH', `${deployments}/missing/status`, '{"status":{"replicas":1}}')
  await compare(tally, 'get status (missing)', up, ours, 'GET', `${deployments}/missing/status`)
  await compare(tally, 'unknown subresource', up, ours, 'GET', `${deployments}/scaled/bogus`)
  await compare(tally, 'post to a subresource', up, ours, 'POST', `${deployments}/scaled/status`, deployment)
}

/** Paths whose segments hold escapes that do not decode, or decode to what no name may be. */
const ODD_PATHS = [
  '/api/v1/namespaces/%zz/configmaps',
  '/api/v1/namespaces/%zz/configmaps/x',
  '/api/v1/namespaces/default/configmaps/%zz',
  '/api/v1/namespaces/default/configmaps/%',
  '/api/v1/namespaces/default/configmaps/a%2',
  '/api/v1/namespaces/%2/configmaps',
  '/api/v1/namespaces/%zz',
  '/api/v1/namespaces/default/configmaps/%E0%A4%A',
  '/api/v1/namespaces/default/configmaps/%C0%AF',
  '/api/v1/namespaces/default/configmaps/%2F',
  '/api/v1/namespaces/default/configmaps/a%2Fb',
  '/api/v1/namespaces/default/configmaps/%00',
  '/api/v1/namespaces/default/configmaps/%2e%2e',
  '/apis/apps/v1/namespaces/%zz/deployments/x/scale',
  '/api/v1/%zz',
  '/api/%zz',
  '/apis/%zz/v1',
]

/** Each verb on paths whose segments do not decode: the status, and the message or the text of the answer. */
async function paths(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  if (only && !only.test('/v1/configmaps')) return
  const summary = (a: Answer) => `${a.status} ${a.body ? messageOf(a) : JSON.stringify(a.text.slice(0, 200))}`
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }
  for (const path of ODD_PATHS) {
    for (const [method, body, type] of [
      ['GET', undefined, undefined],
      ['POST', cm, undefined],
      ['PUT', cm, undefined],
      ['PATCH', '{}', PATCH_TYPES.merge],
      ['DELETE', undefined, undefined],
      ['GET', undefined, 'watch'],
    ] as const) {
      const target = type === 'watch' ? `${path}?watch=1&timeoutSeconds=1` : path
      const [a, b] = await Promise.all([up(method, target, body, type === 'watch' ? undefined : type), ours(method, target, body, type === 'watch' ? undefined : type)])
      const [x, y] = [summary(a), summary(b)]
      if (x === y) tally.same++
      else {
        tally.differ++
        console.log(`\n${method} ${target}\n  upstream ${x}\n  ours     ${y}`)
      }
    }
  }
}

/** What a Table's rows carry of each object under `includeObject`, for comparing without names and times. */
const rowObjects = (a: Answer): string => {
  const rows = Array.isArray(a.body?.['rows']) ? (a.body['rows'] as Json[]) : []
  return rows.map((r) => {
    const o = record(r['object'])
    return Object.keys(o).length ? `${String(o['kind'] ?? '-')}:${Object.keys(o).sort().join(',')}` : 'none'
  }).join(' ')
}

/** Table options (includeObject, versions of the Table asked for) and server-side apply conflicts, on ConfigMaps. */
async function options(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  if (only && !only.test('/v1/configmaps')) return
  for (const call of [up, ours]) await call('POST', CONFIG_MAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tabled' }, data: { a: '1' } })
  const report = (what: string, x: string, y: string) => {
    if (x === y) tally.same++
    else {
      tally.differ++
      console.log(`\n${what}\n  upstream ${x}\n  ours     ${y}`)
    }
  }
  const accepts = ['application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'application/json;as=Table;v=v9;g=meta.k8s.io', 'application/json;as=Table;g=meta.k8s.io', 'application/json;as=Bogus;v=v1;g=meta.k8s.io', 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json']
  const queries = ['', 'includeObject=None', 'includeObject=Metadata', 'includeObject=Object', 'includeObject=Bogus', 'includeObject=']
  for (const accept of accepts) {
    for (const query of queries) {
      for (const path of [`${CONFIG_MAPS}?fieldSelector=metadata.name%3Dtabled${query ? `&${query}` : ''}`, `${CONFIG_MAPS}/tabled${query ? `?${query}` : ''}`]) {
        const [a, b] = await Promise.all([up('GET', path, undefined, undefined, accept), ours('GET', path, undefined, undefined, accept)])
        const summary = (t: Answer) => (t.status === 200 ? `200 ${String(t.body?.['kind'])} ${rowObjects(t)}` : `${t.status} ${messageOf(t)}`)
        report(`table ${accept} ${path}`, summary(a), summary(b))
      }
    }
  }
  const apply = (call: Call, manager: string, value: string, extra = '') =>
    call('PATCH', `${CONFIG_MAPS}/applied?fieldManager=${manager}${extra}`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: "${value}"\n`, PATCH_TYPES.apply)
  for (const call of [up, ours]) await apply(call, 'first', '1')
  const steps: [string, string, string, string][] = [
    ['same value, other manager', 'second', '1', ''],
    ['other value, other manager', 'third', '2', ''],
    ['other value, other manager, dry run', 'third', '2', '&dryRun=All'],
    ['other value, forced, dry run', 'third', '2', '&force=true&dryRun=All'],
    ['other value, force=false', 'third', '2', '&force=false'],
  ]
  for (const [what, manager, value, extra] of steps) {
    const [a, b] = await Promise.all([apply(up, manager, value, extra), apply(ours, manager, value, extra)])
    const summary = (t: Answer) => `${t.status} ${t.status >= 300 ? `${messageOf(t)} ${JSON.stringify(record(t.body?.['details'])['causes'] ?? [])}` : ''}`
    report(`apply (${what})`, summary(a), summary(b))
  }
  const update = (call: Call) => call('PUT', `${CONFIG_MAPS}/applied?fieldManager=editor`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data: { a: '3' } })
  const [u, v] = await Promise.all([update(up), update(ours)])
  report('update of an applied field (no conflict for updates)', String(u.status), String(v.status))
  const [a, b] = await Promise.all([apply(up, 'first', '1'), apply(ours, 'first', '1')])
  const summary = (t: Answer) => `${t.status} ${t.status >= 300 ? `${messageOf(t)} ${JSON.stringify(record(t.body?.['details'])['causes'] ?? [])}` : ''}`
  report('apply after an update took the field', summary(a), summary(b))
}

/** Cells whose values two servers give apart by nature: ages, addresses, names made up for the object. */
const VOLATILE_COLUMNS = new Set(['Age', 'Cluster-IP', 'External-IP', 'IP', 'Endpoints', 'Last Seen', 'Created At', 'Duration', 'Completions', 'Secrets', 'Data', 'Token', 'Ready', 'Status', 'Restarts', 'Nominated Node', 'Node', 'Readiness Gates', 'Up-to-date', 'Available', 'Current', 'Desired', 'Condition', 'Requestor'])

/** Each sample created on both (for real), then its list read as a Table: the columns and the first row's cells compared. */
async function tables(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  const asTable = 'application/json;as=Table;v=v1;g=meta.k8s.io'
  const tableCall = (call: Call, path: string) => call('GET', path, undefined, undefined, asTable)
  for (const sample of SAMPLES) {
    if (only && !only.test(sample.gvr)) continue
    const coll = await collectionOf(up, sample.gvr)
    if (!coll) continue
    const [a, b] = await createdOnBoth(up, ours, coll, sample)
    if (a.status !== 201 || b.status !== 201) continue
    const name = String(meta(a.body ?? {})['name'])
    const path = `${coll.path}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`
    const [x, y] = await Promise.all([tableCall(up, path), tableCall(ours, path)])
    const columns = (t: Answer) => (Array.isArray(t.body?.['columnDefinitions']) ? (t.body['columnDefinitions'] as Json[]) : [])
    const describe = (t: Answer) => columns(t).map((c) => `${String(c['name'])}:${String(c['type'])}${c['format'] ? `/${String(c['format'])}` : ''}`)
    const cells = (t: Answer) => {
      const rows = Array.isArray(t.body?.['rows']) ? (t.body['rows'] as Json[]) : []
      const first = Array.isArray(rows[0]?.['cells']) ? (rows[0]['cells'] as unknown[]) : []
      return columns(t).map((c, i) => (VOLATILE_COLUMNS.has(String(c['name'])) ? '~' : JSON.stringify(first[i])))
    }
    const differences: string[] = []
    if (x.status !== y.status) differences.push(`status: upstream ${x.status}, ours ${y.status}`)
    if (describe(x).join(' ') !== describe(y).join(' ')) differences.push(`columns:\n    upstream ${describe(x).join(' ')}\n    ours     ${describe(y).join(' ')}`)
    else if (cells(x).join(' ') !== cells(y).join(' ')) differences.push(`cells:\n    upstream ${cells(x).join(' ')}\n    ours     ${cells(y).join(' ')}`)
    if (differences.length === 0) tally.same++
    else {
      tally.differ++
      console.log(`\ntable ${sample.gvr}: ${differences.join('\n  ')}`)
    }
  }
}

/** Content types of a body and Accept headers, on each verb: the status, and the message or the text of a refusal. */
async function media(up: Call, ours: Call, only: RegExp | undefined, tally: Tally): Promise<void> {
  if (only && !only.test('/v1/configmaps')) return
  const base = '/api/v1/namespaces/default/configmaps'
  const cm = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'media' }, data: { a: '1' } })
  await Promise.all([up('POST', base, cm), ours('POST', base, cm)])
  const summary = (a: Answer) => (a.status < 300 ? `${a.status}` : `${a.status} ${a.body ? messageOf(a) : JSON.stringify(a.text.slice(0, 200))}`)
  const one = async (what: string, method: string, path: string, body: string | undefined, contentType: string | undefined, accept: string | undefined) => {
    const [a, b] = await Promise.all([up(method, path, body, contentType, accept), ours(method, path, body, contentType, accept)])
    const [x, y] = [summary(a), summary(b)]
    if (x === y) tally.same++
    else {
      tally.differ++
      console.log(`\n${what} ${method} ${path} content-type ${JSON.stringify(contentType)} accept ${JSON.stringify(accept)}\n  upstream ${x}\n  ours     ${y}`)
    }
  }
  const bodyTypes = ['application/json; charset=utf-8', 'Application/JSON', 'text/plain', '', 'application/json, text/plain', 'text/plain, application/json', 'application/merge-patch+json', 'application/yaml', 'application/*', '*/*', 'application/vnd.kubernetes.protobuf']
  for (const type of bodyTypes) {
    await one('create', 'POST', `${base}?dryRun=All`, cm, type, undefined)
    await one('update', 'PUT', `${base}/media?dryRun=All`, cm, type, undefined)
  }
  const patchTypes = [...bodyTypes, 'application/merge-patch+json; charset=utf-8', 'Application/Merge-Patch+JSON', 'application/merge-patch+json, text/plain', 'text/plain, application/merge-patch+json', 'application/json-patch+json']
  for (const type of patchTypes) await one('patch', 'PATCH', `${base}/media?dryRun=All`, '{}', type, undefined)
  await one('patch without a body', 'PATCH', `${base}/media?dryRun=All`, '', 'text/plain', undefined)
  // A body of another kind or version than the URL's resource.
  for (const [apiVersion, kind] of [['v1', 'Secret'], ['v1', 'Deployment'], ['apps/v1', 'ConfigMap'], ['apps/v1', 'Deployment'], ['v2', 'ConfigMap'], ['', 'ConfigMap'], ['v1', '']]) {
    const other = JSON.stringify({ apiVersion, kind, metadata: { name: 'media' }, data: { a: '1' } })
    await one(`create as ${apiVersion} ${kind}`, 'POST', `${base}?dryRun=All`, other, 'application/json', undefined)
    await one(`update as ${apiVersion} ${kind}`, 'PUT', `${base}/media?dryRun=All`, other, 'application/json', undefined)
  }
  const accepts = ['', '*/*', 'application/*', 'text/html', 'text/plain', 'application/json;q=0', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', 'application/json;as=Bogus', 'text/html, application/json', 'application/json;stream=watch', 'garbage', 'application/json, text/html;q=0.9', 'APPLICATION/JSON']
  for (const accept of accepts) {
    await one('get', 'GET', `${base}/media`, undefined, undefined, accept)
    await one('list', 'GET', base, undefined, undefined, accept)
    await one('watch', 'GET', `${base}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dnone`, undefined, undefined, accept)
    await one('create', 'POST', `${base}?dryRun=All`, cm, 'application/json', accept)
    await one('patch', 'PATCH', `${base}/media?dryRun=All`, '{}', 'application/merge-patch+json', accept)
    await one('delete', 'DELETE', `${base}/media?dryRun=All`, undefined, undefined, accept)
  }
}

const SUITES = { creates, updates, status, selectors, defaults, reads, patches, deletes, subresources, tables, paths, options, media } as const

const { values } = parseArgs({
  options: {
    upstream: { type: 'string', default: process.env['UPSTREAM_KUBE_APISERVER'] },
    suite: { type: 'string', multiple: true },
    only: { type: 'string' },
    port: { type: 'string', default: '16443' },
  },
})
if (!values.upstream) {
  console.error('usage: node --import tsx tools/differential.ts --upstream KUBE_APISERVER [--suite creates|updates|status|selectors|defaults|reads|patches|deletes|subresources|tables|paths|options|media]... [--only REGEX] [--port N]')
  process.exit(2)
}
const chosen = (values.suite ?? Object.keys(SUITES)) as (keyof typeof SUITES)[]
const unknown = chosen.filter((s) => !(s in SUITES))
if (unknown.length) {
  console.error(`unknown suite: ${unknown.join(', ')} (known: ${Object.keys(SUITES).join(', ')})`)
  process.exit(2)
}
const [upstream, ours] = await Promise.all([startUpstream(resolve(values.upstream), Number(values.port)), startOurs()])
const tally: Tally = { same: 0, differ: 0 }
try {
  for (const name of chosen) {
    console.log(`# ${name}`)
    await SUITES[name](upstream.call, ours.call, values.only ? new RegExp(values.only) : undefined, tally)
  }
} finally {
  await Promise.all([upstream.stop(), ours.server.shutdown()])
}
console.log(`\n${tally.same} answered alike, ${tally.differ} differently`)
process.exit(0)
