import { base64Decode, base64EncodeText, illegalBase64Index } from '../../machinery/base64.js'
import { goJsonObjectError } from '../../machinery/go-json-check.js'
import { fieldLabelNotSupported } from '../field-labels.js'
import { badRequest } from '../../machinery/status-error.js'
import { type FieldError, fieldPath, invalid, required, tooLong } from '../../machinery/field.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import { ALL_VERBS, type ResourceEntry } from '../catalogue.js'
import { ageColumn, nameColumn } from '../columns/common.js'
import { defineResource } from '../define.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { dataCount, decodedLength, MAX_DATA_SIZE, validateDataMap, validateImmutableData } from './data-maps.js'

const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name'

/** Keys a secret of each built-in type must carry (upstream's ValidateSecret). */
const REQUIRED_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
}

/** Types whose one key must hold a JSON object (or null), as upstream checks it by decoding it into a map. */
const JSON_KEYS: Record<string, string> = {
  'kubernetes.io/dockercfg': '.dockercfg',
  'kubernetes.io/dockerconfigjson': '.dockerconfigjson',
}

/** Upstream's stand-in for a value a message must not show. */
const REDACTED = '<secret contents redacted>'

/** Decoding as upstream: data values must be base64; stringData is folded into data. */
function normalizeSecret(obj: KubeObject): void {
  const data = obj['data']
  if (isPlainObject(data)) {
    for (const value of Object.values(data)) {
      if (typeof value !== 'string') continue
      const at = illegalBase64Index(value)
      if (at >= 0)
        throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${at}`)
    }
  }
  const stringData = obj['stringData']
  if (stringData === undefined || stringData === null) return
  if (!isPlainObject(stringData))
    throw badRequest('Secret in version "v1" cannot be handled as a Secret: stringData must be a map of string to string')
  const merged: Record<string, unknown> = isPlainObject(data) ? { ...data } : {}
  for (const [k, v] of Object.entries(stringData)) {
    if (typeof v !== 'string')
      throw badRequest(`Secret in version "v1" cannot be handled as a Secret: stringData[${k}] must be a string`)
    merged[k] = base64EncodeText(v)
  }
  obj['data'] = merged
  delete obj['stringData']
}

function validateSecret(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  const dataPath = fieldPath('data')
  const size = validateDataMap(obj['data'], dataPath, errs, decodedLength)
  if (size > MAX_DATA_SIZE) errs.push(tooLong(dataPath, MAX_DATA_SIZE))
  const type = typeof obj['type'] === 'string' ? (obj['type'] as string) : 'Opaque'
  const data = isPlainObject(obj['data']) ? obj['data'] : {}
  if (type === 'kubernetes.io/service-account-token') {
    if (!obj.metadata.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION])
      errs.push(required(fieldPath('metadata').child('annotations').key(SERVICE_ACCOUNT_NAME_ANNOTATION)))
  } else if (type === 'kubernetes.io/basic-auth') {
    if (!('username' in data) && !('password' in data))
      errs.push(required(dataPath.key('username')), required(dataPath.key('password')))
  }
  for (const key of REQUIRED_KEYS[type] ?? []) if (!(key in data)) errs.push(required(dataPath.key(key)))
  const jsonKey = JSON_KEYS[type]
  const encoded = jsonKey === undefined ? undefined : data[jsonKey]
  if (jsonKey !== undefined && typeof encoded === 'string') {
    let error: string | undefined
    try {
      error = goJsonObjectError(base64Decode(encoded))
    } catch {
      error = undefined // not base64: refused while decoding the body, before validation
    }
    // The error names the offending character at most; the value itself stays out of the message.
    if (error) errs.push(invalid(dataPath.key(jsonKey), REDACTED, error))
  }
  return errs
}

export const secrets: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'Secret',
  listKind: 'SecretList',
  resource: 'secrets',
  singular: 'secret',
  namespaced: true,
  verbs: ALL_VERBS,
  typeName: 'io.k8s.api.core.v1.Secret',
  validateName: isDNS1123Subdomain,
  strategy: {
    normalize: normalizeSecret,
    applyDefaults(obj) {
      if (!obj['type']) obj['type'] = 'Opaque'
    },
    validate: validateSecret,
    validateUpdate(obj, old) {
      const errs = [...validateSecret(obj), ...validateImmutableData(obj, old, ['data'])]
      if (obj['type'] !== old['type']) errs.push(invalid(fieldPath('type'), obj['type'], 'field is immutable'))
      return errs
    },
    fieldLabelRefusal: fieldLabelNotSupported,
    fieldSet: (obj) => ({ type: typeof obj['type'] === 'string' ? obj['type'] : '' }),
  },
  columns: [
    nameColumn,
    {
      name: 'Type',
      type: 'string',
      description: 'The type of the secret, which says what its data holds.',
      priority: 0,
      cell: (obj) => obj['type'] ?? '',
    },
    {
      name: 'Data',
      type: 'string',
      description: 'How many keys the secret holds.',
      priority: 0,
      cell: (obj) => dataCount(obj, 'data'),
    },
    ageColumn,
  ],
})
