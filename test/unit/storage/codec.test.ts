import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../core/machinery/object.js'
import { codecFor, decodeStoredObject, jsonCodec, protobufCodec, yamlCodec } from '../../../core/storage/codec.js'

const configMap: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'default', uid: 'u-1', resourceVersion: '42', labels: { app: 'web' } },
  data: { mode: 'fast' },
}

const custom: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'default' },
  spec: { size: 3 },
}

const { resourceVersion: _rv, ...storedMetadata } = configMap.metadata
const stored = { ...configMap, metadata: storedMetadata }

describe('storage codec', () => {
  for (const codec of [jsonCodec, yamlCodec, protobufCodec]) {
    it(`round-trips an object as ${codec.mediaType}, without its resourceVersion`, () => {
      assert.deepEqual(codec.decode(codec.encode(configMap)), stored)
    })
  }

  it('writes the protobuf envelope upstream writes, and JSON for kinds without a protobuf type', () => {
    assert.deepEqual([...protobufCodec.encode(configMap).subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00])
    const bytes = protobufCodec.encode(custom)
    assert.equal(new TextDecoder().decode(bytes), JSON.stringify(custom))
    assert.deepEqual(protobufCodec.decode(bytes), custom)
  })

  it('reads what any media type wrote, so changing --storage-media-type keeps old values readable', () => {
    for (const writer of [jsonCodec, yamlCodec, protobufCodec]) {
      assert.deepEqual(decodeStoredObject(writer.encode(configMap)), stored, `written as ${writer.mediaType}`)
    }
  })

  it('refuses a media type that is not a storage media type, naming the supported ones', () => {
    assert.throws(
      () => codecFor('text/plain'),
      /--storage-media-type=text\/plain: supported values are application\/json, application\/yaml, application\/vnd.kubernetes.protobuf/,
    )
  })
})
