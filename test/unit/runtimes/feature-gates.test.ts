/** --feature-gates in the daemon: each implemented gate reaches what it switches, with its default at the (emulated) version. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { featureEnabled, readCommandLine } from '../../../core/options/flags/index.js'
import { daemonAdmission } from '../../../runtimes/node/daemon/admission.js'
import { eventExpiry } from '../../../core/options/apply-flags.js'
import { multiServerOptions } from '../../../runtimes/node/daemon/multi-server.js'

function flags(argv: string[]) {
  const command = readCommandLine(argv)
  if (command.action !== 'run') return assert.fail()
  return command.flags
}

describe('feature gates in the daemon', () => {
  it('turns the MutatingAdmissionPolicy plugin on only with its gate (alpha, off by default)', () => {
    assert.equal(daemonAdmission(flags([]), undefined).options.mutatingAdmissionPolicy, false)
    assert.equal(daemonAdmission(flags(['--feature-gates=MutatingAdmissionPolicy=true']), undefined).options.mutatingAdmissionPolicy, true)
    assert.equal(daemonAdmission(flags(['--feature-gates=AllAlpha=true', '--runtime-config=api/alpha=true']), undefined).options.mutatingAdmissionPolicy, true)
  })

  it("holds kubelets' token audiences to their pods' volumes with ServiceAccountNodeAudienceRestriction (beta, off at 1.32)", () => {
    const restricted = (args: string[]) => daemonAdmission(flags(args), undefined).options.serviceAccountNodeAudienceRestriction
    assert.equal(restricted([]), false)
    assert.equal(restricted(['--feature-gates=ServiceAccountNodeAudienceRestriction=true']), true)
    assert.equal(restricted(['--feature-gates=AllBeta=true']), true)
  })

  it('publishes the identity lease unless APIServerIdentity is turned off', () => {
    assert.equal(multiServerOptions(flags([]).values).identityLease, true)
    assert.equal(multiServerOptions(flags(['--feature-gates=APIServerIdentity=false']).values).identityLease, false)
    assert.equal(multiServerOptions(flags(['--feature-gates=AllBeta=false']).values).identityLease, false)
  })

  it('takes the defaults of the emulated version', () => {
    assert.equal(featureEnabled(flags([]).values, 'StructuredAuthenticationConfiguration'), true)
    assert.equal(featureEnabled(flags(['--emulated-version=1.29']).values, 'StructuredAuthenticationConfiguration'), false)
    assert.equal(featureEnabled(flags(['--emulated-version=1.31']).values, 'RemoteRequestHeaderUID'), false)
  })

  it('elects the controllers and expires events itself only where the store calls for it', () => {
    assert.equal(multiServerOptions(flags([]).values).sharedStorage, false)
    assert.equal(multiServerOptions(flags(['--kvstore-servers=http://127.0.0.1:2379']).values).sharedStorage, true)
    // The workers of one daemon share the embedded store's file, and elect the controllers as servers on one etcd do.
    assert.equal(multiServerOptions(flags(['--workers=2']).values).sharedStorage, true)
    assert.deepEqual(eventExpiry(flags(['--event-ttl=5m']).values), { eventTtlMs: 300_000 })
    assert.deepEqual(eventExpiry(flags(['--kvstore-servers=http://127.0.0.1:2379']).values), {})
  })
})
