import { type FieldError, fieldPath, invalid, tooLong } from '../../machinery/field.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import { ALL_VERBS, type ResourceEntry } from '../catalogue.js'
import { ageColumn, nameColumn } from '../columns/common.js'
import { defineResource } from '../define.js'
import { isPlainObject, type KubeObject } from '../../machinery/object.js'
import { dataCount, decodedLength, MAX_DATA_SIZE, utf8LengthUpTo, validateDataMap, validateImmutableData } from './data-maps.js'

function validateConfigMap(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = []
  let size = validateDataMap(obj['data'], fieldPath('data'), errs, utf8LengthUpTo)
  size += validateDataMap(obj['binaryData'], fieldPath('binaryData'), errs, decodedLength)
  const data = obj['data']
  const binary = obj['binaryData']
  if (isPlainObject(data) && isPlainObject(binary)) {
    for (const k of Object.keys(binary))
      if (k in data) errs.push(invalid(fieldPath('binaryData').key(k), k, 'duplicate of key present in data'))
  }
  if (size > MAX_DATA_SIZE) errs.push(tooLong(fieldPath(''), MAX_DATA_SIZE))
  return errs
}

export const configMaps: ResourceEntry = defineResource({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  resource: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  namespaced: true,
  verbs: ALL_VERBS,
  typeName: 'io.k8s.api.core.v1.ConfigMap',
  validateName: isDNS1123Subdomain,
  strategy: {
    validate: validateConfigMap,
    validateUpdate: (obj, old) => [...validateConfigMap(obj), ...validateImmutableData(obj, old, ['data', 'binaryData'])],
  },
  columns: [
    nameColumn,
    {
      name: 'Data',
      type: 'string',
      description: 'How many keys the ConfigMap holds, in data and binaryData.',
      priority: 0,
      cell: (obj) => dataCount(obj, 'data', 'binaryData'),
    },
    ageColumn,
  ],
})
