/** The admissionregistration.k8s.io rules on their own: client config, resource rules, CEL, update relaxations. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { admissionCompileError } from '../../../core/resources/admissionregistration/cel.js'
import { validateClientConfig } from '../../../core/resources/admissionregistration/client-config.js'
import { validateValidatingPolicy } from '../../../core/resources/admissionregistration/policies.js'
import { validateRuleWithOperations } from '../../../core/resources/admissionregistration/rules.js'
import {
  applyWebhookDefaultsInSteps,
  validateWebhookConfigurationInSteps,
  validateWebhookConfigurationUpdateInSteps,
} from '../../../core/resources/admissionregistration/webhooks.js'
import type { KubeObject } from '../../../core/machinery/object.js'
import { errorText, fieldPath } from '../../../core/machinery/field.js'
import { runAtOnce, UNITS_PER_STEP } from '../../../core/machinery/time-slice.js'

type Kind = Parameters<typeof validateWebhookConfigurationInSteps>[1]
const validateWebhookConfiguration = (obj: KubeObject, kind: Kind) => runAtOnce(validateWebhookConfigurationInSteps(obj, kind))
const validateWebhookConfigurationUpdate = (obj: KubeObject, old: KubeObject, kind: Kind) => runAtOnce(validateWebhookConfigurationUpdateInSteps(obj, old, kind))

const path = fieldPath('clientConfig')
const config = (c: unknown): string[] => validateClientConfig(c, path).map(errorText)
const rule = (r: Record<string, unknown>): string[] =>
  validateRuleWithOperations({ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], ...r }, fieldPath('rules').index(0)).map(errorText)

describe('webhook client config', () => {
  it('reads a URL as Go does: a missing scheme and host are named, not a parse error', () => {
    assert.deepEqual(config({ url: 'hooks.example.com/check#top' }), [
      "clientConfig.url: Invalid value: \"\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
      'clientConfig.url: Invalid value: "": host must be provided; desired format: https://host[/path]',
      'clientConfig.url: Invalid value: "top": fragments are not permitted in the URL',
    ])
    assert.deepEqual(config({ url: 'https://hooks.example.com:8443/check' }), [])
  })

  it('checks a service reference: port range and path segments', () => {
    assert.deepEqual(config({ service: { namespace: 'ns', name: 'svc', port: 0, path: '/a//Bad/' } }), [
      'clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
      'clientConfig.service.path: Invalid value: "/a//Bad/": segment[1] may not be empty',
      "clientConfig.service.path: Invalid value: \"/a//Bad/\": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ])
    assert.deepEqual(config({ service: { namespace: 'ns', name: 'svc', path: 'check' } }), [
      "clientConfig.service.path: Invalid value: \"check\": must start with a '/'",
    ])
  })

  it('reports a missing service namespace on name, as upstream does', () => {
    assert.deepEqual(config({ service: { name: 'svc' } }), ['clientConfig.service.name: Required value: service name is required'])
  })
})

describe('admission resource rules', () => {
  it('lets subresource wildcards cover each other only once', () => {
    assert.deepEqual(rule({ resources: ['pods/*', 'pods/log'] }), [
      "rules[0].resources[1]: Invalid value: \"pods/log\": if 'pods/*' is present, must not specify pods/log",
    ])
    assert.deepEqual(rule({ resources: ['*/status', 'pods/status'] }), [
      "rules[0].resources[1]: Invalid value: \"pods/status\": if '*/status' is present, must not specify pods/status",
    ])
    assert.deepEqual(rule({ resources: ['*/*', 'pods'] }), [
      'rules[0].resources: Invalid value: []string{"*/*", "pods"}: if \'*/*\' is present, must not specify other resources',
    ])
    assert.deepEqual(rule({ resources: ['*', 'pods/status'] }), [])
  })

  it('requires operations, versions and resources, and names unknown operations', () => {
    assert.deepEqual(validateRuleWithOperations({ operations: ['PATCH'], apiGroups: [''], apiVersions: [''] }, fieldPath('r')).map(errorText), [
      'r.operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      'r.apiVersions[0]: Required value',
      'r.resources: Required value',
    ])
  })
})

describe('admission CEL', () => {
  const vars = { params: false, authorizer: true, variables: false as const }

  it('declares the request, the objects and the authorizer library', () => {
    assert.equal(admissionCompileError("request.userInfo.username.startsWith('system:') && has(object.metadata)", ['bool'], vars), undefined)
    assert.equal(admissionCompileError("authorizer.group('apps').resource('deployments').namespace('x').check('get').allowed()", ['bool'], vars), undefined)
    assert.equal(admissionCompileError('authorizer.requestResource.check(\'get\').reason()', ['bool'], vars), 'must evaluate to bool')
    assert.equal(admissionCompileError('null', ['string', 'null'], vars), undefined)
    assert.equal(admissionCompileError('1', ['string', 'null'], vars), 'must evaluate to one of [string null_type]')
  })
})

describe('webhook configuration updates', () => {
  const hook = (name: string, sideEffects: string) => ({
    name,
    clientConfig: { url: 'https://hooks.example.com' },
    sideEffects,
    admissionReviewVersions: ['v1'],
  })
  const config = (...webhooks: unknown[]): KubeObject => ({ metadata: { name: 'c' }, webhooks })

  it('keeps side effects and duplicate names the stored object already had', () => {
    const old = config(hook('a.example.com', 'Some'), hook('a.example.com', 'Unknown'))
    assert.equal(validateWebhookConfiguration(old, 'validating').length, 3)
    assert.deepEqual(validateWebhookConfigurationUpdate(old, old, 'validating'), [])
  })

  it('defaults the timeout to ten seconds and a service port to 443, keeping given values', () => {
    const obj = config({ ...hook('a.example.com', 'None'), timeoutSeconds: 3, clientConfig: { service: { namespace: 'n', name: 's' } } })
    runAtOnce(applyWebhookDefaultsInSteps(obj, 'validating'))
    const [h] = obj['webhooks'] as Record<string, unknown>[]
    assert.equal(h?.['timeoutSeconds'], 3)
    assert.deepEqual(h?.['clientConfig'], { service: { namespace: 'n', name: 's', port: 443 } })
    assert.equal(h?.['reinvocationPolicy'], undefined)
  })
})

describe('validating admission policy', () => {
  it('needs validations or audit annotations, and checks audit annotation keys and values', () => {
    const base = { failurePolicy: 'Fail', matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] } }
    const empty: KubeObject = { metadata: { name: 'p' }, spec: base }
    assert.deepEqual(validateValidatingPolicy(empty).map(errorText), [
      'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
      'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
    ])
    const annotated: KubeObject = {
      metadata: { name: 'p' },
      spec: { ...base, auditAnnotations: [{ key: 'who', valueExpression: 'request.userInfo.username' }, { key: 'who', valueExpression: '1' }] },
    }
    assert.deepEqual(validateValidatingPolicy(annotated).map(errorText), [
      'spec.auditAnnotations[1].valueExpression: Invalid value: "1": must evaluate to one of [string null_type]',
      'spec.auditAnnotations[1].key: Duplicate value: "who"',
    ])
  })
})

describe('a configuration of many webhooks', () => {
  // A body of 3 MB holds a million webhooks: their defaults held the thread 0.45 s in one piece.
  it('is defaulted and validated with checkpoints, a step at most a step of webhooks apart', () => {
    const count = 20_000
    const obj: KubeObject = { metadata: { name: 'many' }, webhooks: Array.from({ length: count }, () => ({})) }
    const hooks = obj['webhooks'] as Record<string, unknown>[]
    const defaults = applyWebhookDefaultsInSteps(obj, 'validating')
    let checkpoints = 0
    let before = 0
    let mostBetween = 0
    for (let step = defaults.next(); ; step = defaults.next()) {
      const done = hooks.filter((h) => h['failurePolicy'] === 'Fail').length
      mostBetween = Math.max(mostBetween, done - before)
      before = done
      if (step.done) break
      checkpoints++
    }
    assert.equal(before, count)
    assert.ok(mostBetween <= UNITS_PER_STEP + 1, `${mostBetween} webhooks between two checkpoints`)
    assert.ok(checkpoints >= Math.floor(count / (UNITS_PER_STEP + 1)), `${checkpoints} checkpoints`)
    const validation = validateWebhookConfigurationInSteps(obj, 'validating')
    let validated = validation.next()
    let validationCheckpoints = 0
    for (; !validated.done; validated = validation.next()) validationCheckpoints++
    assert.ok(validationCheckpoints >= Math.floor(count / (UNITS_PER_STEP + 1)), `${validationCheckpoints} checkpoints`)
    assert.equal(errorText(validated.value[0]!), 'webhooks[0].name: Required value')
  })
})
