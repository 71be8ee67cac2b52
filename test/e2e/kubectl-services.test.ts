/** kubectl against the daemon's Services: cluster IPs from the flag's range, the cluster Service, default service accounts. */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Daemon, eventually } from './daemon.js'

let d: Daemon

before(async () => {
  d = await Daemon.start(['--service-cluster-ip-range=10.96.0.0/16', '--advertise-address=127.0.0.1'])
})

after(async () => {
  assert.equal(await d.stop(), 0, 'the daemon exits 0 on SIGTERM')
})

const ok = (...args: string[]): Promise<string> => d.ok(...args)

describe('kubectl and services', () => {
  it('shows a new service with a cluster IP from --service-cluster-ip-range', async () => {
    assert.equal(await ok('create', 'service', 'clusterip', 'web', '--tcp=80:8080'), 'service/web created\n')
    assert.match(await ok('get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'), /^10\.96\.\d+\.\d+$/)
    const taken = await d.kubectl('create', 'service', 'clusterip', 'copy', '--tcp=80:8080', `--clusterip=${await ok('get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}')}`)
    assert.notEqual(taken.code, 0)
    assert.match(taken.stderr, /provided IP is already allocated/)
  })

  it('has the kubernetes service on the first address, pointing at the secure port', async () => {
    assert.equal(await ok('get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP} {.spec.ports[0].port}'), '10.96.0.1 443')
    assert.equal(await ok('get', 'endpoints', 'kubernetes', '-o', 'jsonpath={.subsets[0].addresses[0].ip}:{.subsets[0].ports[0].port}'), `127.0.0.1:${d.port}`)
  })

  it('gives a new namespace its default service account', async () => {
    await ok('create', 'namespace', 'team')
    await eventually(async () => {
      assert.match(await ok('get', 'sa', 'default', '-n', 'team'), /^NAME\s+SECRETS\s+AGE\ndefault\s+0\s+/)
    })
  })
})
