import assert from 'node:assert/strict'
import { fieldLabelNotSupported } from '../../../core/resources/field-labels.js'
import { describe, it } from 'node:test'
import { selectableFieldSet } from '../../../core/crd/selectable-fields.js'
import { StatusError } from '../../../core/machinery/status-error.js'
import { parseListQuery, selectableFields } from '../../../core/registry/list-query.js'
import type { ResourceEntry } from '../../../core/resources/catalogue.js'
import type { KubeObject } from '../../../core/machinery/object.js'

const FIELDS = [
  { jsonPath: '.spec.color' },
  { jsonPath: '.spec.size' },
  { jsonPath: '.spec.ratio' },
  { jsonPath: '.spec.enabled' },
  { jsonPath: '.status.phase' },
]

function shirt(spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject {
  const obj: KubeObject = {
    apiVersion: 'stable.example.com/v1',
    kind: 'Shirt',
    metadata: { name: 'tee', namespace: 'default' },
    spec,
  }
  if (status) obj['status'] = status
  return obj
}

const entry: ResourceEntry = {
  group: 'stable.example.com',
  version: 'v1',
  kind: 'Shirt',
  listKind: 'ShirtList',
  resource: 'shirts',
  singular: 'shirt',
  namespaced: true,
  verbs: ['list'],
  typeName: 'com.example.stable.v1.Shirt',
  validateName: () => [],
  // As the CRD controller's entries carry it.
  strategy: { fieldSet: selectableFieldSet(FIELDS), fieldLabelRefusal: fieldLabelNotSupported },
  columns: [],
}

describe('custom resource selectable fields', () => {
  it('names each field by its path without the leading dot, its value printed as Go prints it', () => {
    const set = selectableFieldSet(FIELDS)(shirt({ color: 'blue', size: 42, ratio: 0.5, enabled: true }, { phase: 'Sold' }))
    assert.deepEqual(set, {
      'spec.color': 'blue',
      'spec.size': '42',
      'spec.ratio': '0.5',
      'spec.enabled': 'true',
      'status.phase': 'Sold',
    })
  })

  it('gives an absent or null field the empty value', () => {
    const set = selectableFieldSet(FIELDS)(shirt({ color: null, enabled: false }))
    assert.deepEqual(set, { 'spec.color': '', 'spec.size': '', 'spec.ratio': '', 'spec.enabled': 'false', 'status.phase': '' })
    assert.deepEqual(selectableFieldSet(undefined)(shirt({})), {})
  })

  it('adds to metadata.name and metadata.namespace in the field set the registry filters on', () => {
    assert.deepEqual(selectableFields(entry, shirt({ color: 'red', size: 1 })), {
      'metadata.name': 'tee',
      'metadata.namespace': 'default',
      'spec.color': 'red',
      'spec.size': '1',
      'spec.ratio': '',
      'spec.enabled': '',
      'status.phase': '',
    })
  })

  it('lets a list select on them, and matches objects by them', async () => {
    const query = await parseListQuery(new URLSearchParams({ fieldSelector: 'spec.color=blue,spec.size!=3' }), entry)
    const selector = query.fieldSelector
    assert.ok(selector)
    assert.equal(selector.matches(selectableFields(entry, shirt({ color: 'blue', size: 4 }))), true)
    assert.equal(selector.matches(selectableFields(entry, shirt({ color: 'blue', size: 3 }))), false)
    assert.equal(selector.matches(selectableFields(entry, shirt({ color: 'red', size: 4 }))), false)
  })

  it('refuses a field the CRD does not make selectable with 400 field label not supported', async () => {
    await assert.rejects(
      () => parseListQuery(new URLSearchParams({ fieldSelector: 'spec.sleeves=long' }), entry),
      (err: unknown) => err instanceof StatusError && err.code === 400 && err.message === 'field label not supported: spec.sleeves',
    )
  })
})
