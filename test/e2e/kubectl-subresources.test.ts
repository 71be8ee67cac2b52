/** kubectl against the daemon's status and scale subresources: `kubectl scale` and `get --subresource`. */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start()
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

describe('kubectl and subresources', () => {
  it('scales a deployment and reads the replicas back', async () => {
    assert.equal(await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=1'), 'deployment.apps/web created\n')
    assert.equal(await ok('scale', 'deployment', 'web', '--replicas=3'), 'deployment.apps/web scaled\n')
    assert.equal(await ok('get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}'), '3 2')
    assert.equal(await ok('get', 'deployment', 'web', '--subresource=scale', '-o', 'jsonpath={.kind} {.spec.replicas} {.status.selector}'), 'Scale 3 app=web')
  })

  it('refuses a scale whose current replicas do not match', async () => {
    const r = await d.kubectl('scale', 'deployment', 'web', '--current-replicas=5', '--replicas=2')
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /Expected replicas to be 5, was 3/)
  })

  it('reads a deployment through its status subresource', async () => {
    assert.equal(await ok('get', 'deployment', 'web', '--subresource=status', '-o', 'jsonpath={.metadata.name} {.spec.replicas}'), 'web 3')
  })
})
