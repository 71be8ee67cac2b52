import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { duplicateJsonFields } from '../../../core/http/duplicate-fields.js'

describe('duplicate fields of a JSON body', () => {
  it('names each duplicate by its path, in document order', () => {
    assert.deepEqual(duplicateJsonFields('{"a":1,"a":2}'), ['duplicate field "a"'])
    assert.deepEqual(duplicateJsonFields('[{"x":{"k":1,"k":2}},{"y":[1,{"z":1,"z":2}]}]'), ['duplicate field "[0].x.k"', 'duplicate field "[1].y[1].z"'])
    assert.deepEqual(duplicateJsonFields('{"spec":{"template":{"spec":{"containers":[{},{"name":"a","name":"b"}]}}}}'), [
      'duplicate field "spec.template.spec.containers[1].name"',
    ])
  })

  it('finds a duplicate among many keys, and escaped keys as JSON.parse reads them', () => {
    const keys = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`)
    assert.deepEqual(duplicateJsonFields(`{${keys.join(',')},"k3":0,"k39":0}`), ['duplicate field "k3"', 'duplicate field "k39"'])
    assert.deepEqual(duplicateJsonFields('{"a\\u0062":1,"ab":2,"q\\"":{"x":1,"x":2}}'), ['duplicate field "ab"', 'duplicate field "q\\".x"'])
  })

  it('keeps the keys of each object apart, however its neighbours were read', () => {
    assert.deepEqual(duplicateJsonFields('{"a":{"b":1},"c":{"b":1},"d":[{"b":1},{"b":1,"e":{"b":2}}]}'), [])
    assert.deepEqual(duplicateJsonFields('{"a":{"b":1},"c":{"b":1,"b":2},"a":[]}'), ['duplicate field "c.b"', 'duplicate field "a"'])
  })
})
