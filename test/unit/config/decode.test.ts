import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { ConfigFileError, type ConfigKind, decodeConfig } from '../../../core/config/decode.js'
import { goDuration } from '../../../core/config/fields.js'
import { FieldPath, invalid } from '../../../core/machinery/field.js'

const Example: ConfigKind<{ items: { name: string; timeout?: number }[] }> = {
  kind: 'ExampleConfiguration',
  apiVersions: ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1'],
  schema: z.strictObject({ items: z.array(z.strictObject({ name: z.string(), timeout: goDuration.optional() })) }),
  validate: (c) =>
    c.items.flatMap((item, i) =>
      item.name === item.name.toLowerCase() ? [] : [invalid(FieldPath.root('items').index(i).child('name'), item.name, 'must be lowercase')],
    ),
}

function problems(text: string): string {
  try {
    decodeConfig(text, 'example.yaml', Example)
  } catch (err) {
    assert.ok(err instanceof ConfigFileError)
    return err.message
  }
  return assert.fail('the file was accepted')
}

describe('config file decoding', () => {
  it('reads YAML and JSON alike, with Go durations as milliseconds', () => {
    const yaml = 'apiVersion: apiserver.config.k8s.io/v1\nkind: ExampleConfiguration\nitems:\n- name: a\n  timeout: 1m30s\n'
    const json = '{"apiVersion":"apiserver.config.k8s.io/v1beta1","kind":"ExampleConfiguration","items":[{"name":"a","timeout":"1m30s"}]}'
    assert.deepEqual(decodeConfig(yaml, 'x', Example), { items: [{ name: 'a', timeout: 90_000 }] })
    assert.deepEqual(decodeConfig(json, 'x', Example), { items: [{ name: 'a', timeout: 90_000 }] })
  })

  it('lists every structural problem at once with its field path', () => {
    const text = 'apiVersion: apiserver.config.k8s.io/v1\nkind: ExampleConfiguration\nitems:\n- name: 3\n  colour: red\n- timeout: soon\n'
    assert.equal(
      problems(text),
      [
        'example.yaml: invalid ExampleConfiguration:',
        '  items[0].name: Invalid value: 3: must be a string',
        '  unknown field "items[0].colour"',
        '  items[1].name: Required value',
        '  items[1].timeout: Invalid value: "soon": time: invalid duration "soon"',
      ].join('\n'),
    )
  })

  it('runs the semantic rules once the structure is right', () => {
    const text = 'apiVersion: apiserver.config.k8s.io/v1\nkind: ExampleConfiguration\nitems: [{name: Upper}]\n'
    assert.equal(problems(text), 'example.yaml: invalid ExampleConfiguration:\n  items[0].name: Invalid value: "Upper": must be lowercase')
  })

  it('refuses another kind, an unknown apiVersion and text that is not YAML', () => {
    assert.match(problems('apiVersion: apiserver.config.k8s.io/v1\nkind: Other\nitems: []\n'), /kind: Invalid value: "Other": must be "ExampleConfiguration"/)
    assert.match(
      problems('apiVersion: v2\nkind: ExampleConfiguration\nitems: []\n'),
      /apiVersion: Unsupported value: "v2": supported values: "apiserver.config.k8s.io\/v1", "apiserver.config.k8s.io\/v1beta1"/,
    )
    assert.match(problems('items: [a, b\n'), /cannot parse as YAML or JSON \(line \d+\)/)
    assert.match(problems('- just\n- a list\n'), /the file must hold one ExampleConfiguration object/)
  })
})
