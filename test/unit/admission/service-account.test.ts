import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { serviceAccount, TOKEN_MOUNT_PATH, tokenVolume } from '../../../core/admission/builtin/service-account.js'
import { pods } from '../../../core/resources/core/pods.js'
import { attrs, index, pod, refusal } from './attributes.js'

const accounts = index([
  { metadata: { name: 'default', namespace: 'default' } },
  { metadata: { name: 'builder', namespace: 'default' }, imagePullSecrets: [{ name: 'registry' }], automountServiceAccountToken: false },
  {
    metadata: { name: 'strict', namespace: 'default', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } },
    secrets: [{ name: 'allowed' }],
    imagePullSecrets: [{ name: 'pull' }],
  },
])
const plugin = serviceAccount(accounts, { retryDelayMs: () => 0, nextSuffix: () => 'abcde' })
const c = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: 'nginx', ...extra })

async function admitted(spec: Record<string, unknown>, metadata = {}) {
  const a = attrs(pods, 'CREATE', pod(spec, metadata))
  await plugin.admit(a)
  await plugin.validate(a)
  return a.object?.['spec'] as Record<string, any>
}

describe('ServiceAccount admission', () => {
  it('runs a pod as default, mounting the projected kube-api-access volume in every container', async () => {
    const spec = await admitted({ initContainers: [c('init')], containers: [c('app')] })
    assert.equal(spec['serviceAccountName'], 'default')
    assert.deepEqual(spec['volumes'], [tokenVolume('kube-api-access-abcde')])
    for (const container of [...spec['initContainers'], ...spec['containers']])
      assert.deepEqual(container.volumeMounts, [{ name: 'kube-api-access-abcde', readOnly: true, mountPath: TOKEN_MOUNT_PATH }])
    assert.equal(spec['imagePullSecrets'], undefined)
  })

  it('mounts nothing where the account or the pod opts out, or a container has its own mount there; copies pull secrets', async () => {
    const byAccount = await admitted({ serviceAccountName: 'builder', containers: [c('app')] })
    assert.equal(byAccount['volumes'], undefined)
    assert.deepEqual(byAccount['imagePullSecrets'], [{ name: 'registry' }])
    const byPod = await admitted({ automountServiceAccountToken: false, containers: [c('app')] })
    assert.equal(byPod['volumes'], undefined)
    const own = await admitted({ containers: [c('app', { volumeMounts: [{ name: 'mine', mountPath: TOKEN_MOUNT_PATH }] })], volumes: [{ name: 'mine', emptyDir: {} }] })
    assert.deepEqual(own['volumes'], [{ name: 'mine', emptyDir: {} }])
    const deprecatedField = await admitted({ serviceAccount: 'builder', containers: [c('app')] })
    assert.deepEqual([deprecatedField['serviceAccountName'], deprecatedField['serviceAccount']], ['builder', 'builder'])
    const kept = await admitted({ imagePullSecrets: [{ name: 'mine' }], serviceAccountName: 'builder', containers: [c('app')] })
    assert.deepEqual(kept['imagePullSecrets'], [{ name: 'mine' }])
  })

  const refusals: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
    ['an account that does not exist', { serviceAccountName: 'ghost', containers: [c('app')] }, {}, 'pods "p" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found'],
    [
      'a secret volume the enforcing account does not list',
      { serviceAccountName: 'strict', imagePullSecrets: [{ name: 'pull' }], containers: [c('app')], volumes: [{ name: 's', secret: { secretName: 'other' } }] },
      {},
      'pods "p" is forbidden: volume with secret.secretName="other" is not allowed because service account strict does not reference that secret',
    ],
    [
      'an env secret it does not list',
      { serviceAccountName: 'strict', imagePullSecrets: [{ name: 'pull' }], containers: [c('app', { env: [{ name: 'PW', valueFrom: { secretKeyRef: { name: 'other', key: 'k' } } }] })] },
      {},
      'pods "p" is forbidden: container app with envVar PW referencing secret.secretName="other" is not allowed because service account strict does not reference that secret',
    ],
    [
      'an init container envFrom secret',
      { serviceAccountName: 'strict', imagePullSecrets: [{ name: 'pull' }], initContainers: [c('init', { envFrom: [{ secretRef: { name: 'other' } }] })], containers: [c('app')] },
      {},
      'pods "p" is forbidden: init container init with envFrom referencing secret.secretName="other" is not allowed because service account strict does not reference that secret',
    ],
    [
      'a pull secret it does not list',
      { serviceAccountName: 'strict', imagePullSecrets: [{ name: 'x' }], containers: [c('app')] },
      {},
      'pods "p" is forbidden: imagePullSecrets[0].name="x" is not allowed because service account strict does not reference that imagePullSecret',
    ],
    ['a mirror pod naming an account', { serviceAccountName: 'default', containers: [c('app')] }, { annotations: { 'kubernetes.io/config.mirror': 'x' } }, 'pods "p" is forbidden: a mirror pod may not reference service accounts'],
    ['a mirror pod with a secret', { containers: [c('app')], volumes: [{ name: 's', secret: { secretName: 'x' } }] }, { annotations: { 'kubernetes.io/config.mirror': 'x' } }, 'pods "p" is forbidden: a mirror pod may not reference secrets'],
  ]
  for (const [what, spec, metadata, message] of refusals) {
    it(`refuses ${what} with 403`, async () => {
      assert.deepEqual(await refusal(() => admitted(spec, metadata)), { code: 403, message })
    })
  }

  it('lets a secret the enforcing account lists through, and leaves a mirror pod unchanged', async () => {
    const spec = await admitted({ serviceAccountName: 'strict', containers: [c('app')], volumes: [{ name: 's', secret: { secretName: 'allowed' } }] })
    assert.deepEqual(spec['imagePullSecrets'], [{ name: 'pull' }])
    const mirror = await admitted({ containers: [c('app')] }, { annotations: { 'kubernetes.io/config.mirror': 'x' } })
    assert.deepEqual(mirror, { containers: [c('app')] })
  })

  it('checks ephemeral containers of an enforcing account on their subresource', async () => {
    const spec = { serviceAccountName: 'strict', containers: [c('app')], ephemeralContainers: [c('debug', { env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'other', key: 'k' } } }] })] }
    const a = attrs(pods, 'UPDATE', pod(spec), { subresource: 'ephemeralcontainers' })
    assert.deepEqual(await refusal(() => plugin.validate(a)), {
      code: 403,
      message: 'pods "p" is forbidden: ephemeral container debug with envVar X referencing secret.secretName="other" is not allowed because service account strict does not reference that secret',
    })
  })
})
