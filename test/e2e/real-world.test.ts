/**
 * What users bring: the published manifests of the Gateway API and
 * cert-manager, installed with kubectl as their guides say, against the daemon
 * on its embedded store and on etcd. Every stored definition must hold every
 * field its file holds. The manifests are reference data kept beside the
 * project (shared/reference/real-world); the suite runs where they are.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parseAllDocuments } from 'yaml'
import { REAL_WORLD_DIR, WITHOUT_REAL_WORLD } from '../fixtures/real-world.js'
import { EtcdServer } from '../storage-contract/etcd-server.js'
import { Daemon } from './daemon.js'

const MANIFESTS = REAL_WORLD_DIR ?? ''
const GATEWAY = join(MANIFESTS, 'gateway-api')
const CERT_MANAGER = join(MANIFESTS, 'cert-manager', 'crds')

interface Manifest {
  kind?: string
  metadata?: { name?: string }
  spec?: unknown
}

function definitionsIn(dir: string): Manifest[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((doc) => doc.toJS() as Manifest))
    .filter((m) => m?.kind === 'CustomResourceDefinition')
}

/** The first place where `stored` lacks or changes what `written` holds; defaults the server adds are fine. */
function missingFrom(written: unknown, stored: unknown, path: string): string | undefined {
  if (Array.isArray(written)) {
    if (!Array.isArray(stored) || stored.length !== written.length) return `${path}: ${JSON.stringify(stored)?.slice(0, 200)}`
    for (let i = 0; i < written.length; i++) {
      const miss = missingFrom(written[i], stored[i], `${path}[${i}]`)
      if (miss) return miss
    }
    return undefined
  }
  if (written !== null && typeof written === 'object') {
    if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return `${path}: not an object`
    for (const [key, value] of Object.entries(written)) {
      const miss = missingFrom(value, (stored as Record<string, unknown>)[key], `${path}.${key}`)
      if (miss) return miss
    }
    return undefined
  }
  return written === stored ? undefined : `${path}: ${JSON.stringify(stored)} instead of ${JSON.stringify(written)}`
}

function installsAsTheGuidesSay(start: () => Promise<Daemon>, stop: (d: Daemon) => Promise<void>): void {
  let d: Daemon
  before(async () => {
    d = await start()
  })
  after(async () => {
    await stop(d)
  })

  async function ok(...args: string[]): Promise<string> {
    const r = await d.kubectl('--request-timeout=60s', ...args)
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr.slice(0, 4000)}`)
    return r.stdout
  }

  it('applies the Gateway API standard definitions client side, then server side, and they become Established', async () => {
    const standard = join(GATEWAY, 'config', 'crd', 'standard')
    await ok('apply', '-f', standard)
    // The release's definitions carry its own bundle version, which its safe-upgrades ValidatingAdmissionPolicy
    // (created last by that apply) lets through: a second apply, server side, is an upgrade in place. The policy's
    // matchConstraints (and its binding's matchResources) is an atomic struct the server defaults; the applied copy
    // lacks the defaults, so server-side apply reports a conflict with client-side apply there, as upstream's field
    // manager does, and --force-conflicts takes it over.
    await ok('apply', '--server-side', '--force-conflicts', '-f', standard)
    assert.match(await ok('get', 'validatingadmissionpolicy,validatingadmissionpolicybinding', '-o', 'name'), /validatingadmissionpolicybinding\.admissionregistration\.k8s\.io\/safe-upgrades\.gateway\.networking\.k8s\.io/)
    await ok('wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s')
  })

  it('applies the experimental definitions server side over them once the safe-upgrades policy is removed, as the Gateway API asks', async () => {
    // The standard bundle's ValidatingAdmissionPolicy forbids experimental definitions over standard ones, as on upstream.
    const refused = await d.kubectl('apply', '--server-side', '--force-conflicts', '-f', join(GATEWAY, 'config', 'crd', 'experimental', 'gateway.networking.k8s.io_gateways.yaml'))
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /ValidatingAdmissionPolicy 'safe-upgrades\.gateway\.networking\.k8s\.io' with binding 'safe-upgrades\.gateway\.networking\.k8s\.io' denied request/)
    await ok('delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', 'safe-upgrades.gateway.networking.k8s.io')
    for (const f of readdirSync(join(GATEWAY, 'config', 'crd', 'experimental')).filter((n) => n.endsWith('.yaml') && n !== 'kustomization.yaml')) {
      await ok('apply', '--server-side', '--force-conflicts', '-f', join(GATEWAY, 'config', 'crd', 'experimental', f))
    }
    await ok('wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s')
  })

  it('applies cert-manager\'s definitions', async () => {
    await ok('apply', '-f', CERT_MANAGER)
    await ok('wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s')
  })

  it('stores every field of every definition as its file writes it', async () => {
    const latest = new Map<string, Manifest>()
    for (const m of [...definitionsIn(join(GATEWAY, 'config', 'crd', 'experimental')), ...definitionsIn(CERT_MANAGER)]) latest.set(m.metadata!.name!, m)
    assert.ok(latest.size >= 15, `found ${latest.size} definitions`)
    const stored = JSON.parse(await ok('get', 'crd', '-o', 'json')) as { items: Manifest[] }
    for (const [name, file] of latest) {
      const crd = stored.items.find((c) => c.metadata?.name === name)
      assert.ok(crd, `${name} is stored`)
      assert.equal(missingFrom(file.spec, crd.spec, `${name} spec`), undefined)
    }
  })

  it('applies the Gateway API\'s examples', async () => {
    await ok('apply', '-f', join(GATEWAY, 'examples', 'standard', '0-namespaces.yaml'))
    await ok('apply', '-f', join(GATEWAY, 'examples', 'standard'))
    assert.match(await ok('get', 'httproutes', '-A'), /NAME/)
  })

  it('explains a custom resource\'s nested fields', async () => {
    const text = await ok('explain', 'httproutes.spec.rules')
    assert.match(text, /KIND:\s+HTTPRoute/)
    assert.match(text, /FIELD:\s+rules/)
    assert.match(text, /matches/)
  })
}

describe('published manifests, installed as users install them', { skip: WITHOUT_REAL_WORLD }, () => {
  describe('on the embedded store', () => {
    installsAsTheGuidesSay(
      () => Daemon.start(),
      async (d) => {
        assert.equal(await d.stop(), 0)
      },
    )
  })

  describe('on etcd', () => {
    let etcd: EtcdServer
    installsAsTheGuidesSay(
      async () => {
        etcd = await EtcdServer.start()
        return Daemon.start([`--etcd-servers=${etcd.clientUrl}`])
      },
      async (d) => {
        assert.equal(await d.stop(), 0)
        await etcd.destroy()
      },
    )
  })
})
