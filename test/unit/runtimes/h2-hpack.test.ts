/**
 * The HPACK decoder against RFC 7541's own examples (Appendix C), and the
 * request encoder's blocks read back by the decoder. A real encoder with a
 * dynamic table and Huffman coding (Node's HTTP/2 server) is met in
 * h2-connection.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { encodeRequestHeaders, HpackDecoder, HpackError } from '../../../runtimes/node/storage/h2/hpack.js'

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex')

function decodeAll(decoder: HpackDecoder, block: Buffer): Array<[string, string]> {
  const fields: Array<[string, string]> = []
  decoder.decode(block, (name, value) => fields.push([name, value]))
  return fields
}

describe('HPACK decoding (RFC 7541 Appendix C)', () => {
  it('reads integers across prefix boundaries (C.1) through an indexed name', () => {
    // A literal without indexing whose name index is 1337 cannot exist; 31 (content-type) takes two bytes at a 4-bit prefix.
    const block = Buffer.concat([hex('0f10'), Buffer.from([4]), Buffer.from('text')])
    assert.deepEqual(decodeAll(new HpackDecoder(), block), [['content-type', 'text']])
  })

  it('decodes the requests of C.3, the dynamic table carried from one block to the next', () => {
    const decoder = new HpackDecoder()
    assert.deepEqual(decodeAll(decoder, hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d')), [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ])
    assert.deepEqual(decodeAll(decoder, hex('8286 84be 5808 6e6f 2d63 6163 6865')), [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
      ['cache-control', 'no-cache'],
    ])
    assert.deepEqual(decodeAll(decoder, hex('8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65')), [
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/index.html'],
      [':authority', 'www.example.com'],
      ['custom-key', 'custom-value'],
    ])
  })

  it('decodes the Huffman-coded requests of C.4', () => {
    const decoder = new HpackDecoder()
    assert.deepEqual(decodeAll(decoder, hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff')), [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ])
    assert.deepEqual(decodeAll(decoder, hex('8286 84be 5886 a8eb 1064 9cbf')), [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
      ['cache-control', 'no-cache'],
    ])
    assert.deepEqual(decodeAll(decoder, hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf')), [
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/index.html'],
      [':authority', 'www.example.com'],
      ['custom-key', 'custom-value'],
    ])
  })

  it('evicts the oldest entries when the table is full, and a size update empties it', () => {
    const decoder = new HpackDecoder(64)
    // Each entry is 1 + 1 + 32 = 34 octets: a 64-octet table holds one.
    decodeAll(decoder, Buffer.concat([hex('40'), Buffer.from([1, 0x61, 1, 0x31])]))
    decodeAll(decoder, Buffer.concat([hex('40'), Buffer.from([1, 0x62, 1, 0x32])]))
    assert.deepEqual(decodeAll(decoder, hex('be')), [['b', '2']])
    assert.throws(() => decodeAll(decoder, hex('bf')), HpackError)
    // A size update to 0 (first in its block) drops every entry.
    assert.throws(() => decodeAll(decoder, hex('20 be')), HpackError)
    assert.throws(() => decodeAll(decoder, hex('82 20')), /size update comes after a header field/)
    assert.throws(() => decodeAll(new HpackDecoder(64), hex('3f 22')), /exceeds the 64 allowed/)
  })

  it('refuses what a broken or hostile encoder sends, as a compression error', () => {
    const decoder = () => new HpackDecoder()
    assert.throws(() => decodeAll(decoder(), hex('80')), /index 0/)
    assert.throws(() => decodeAll(decoder(), hex('ff ff ff ff ff 7f')), /too large/)
    assert.throws(() => decodeAll(decoder(), hex('04 05 61')), /runs past the end/)
    // 'a' (00011, 5 bits) padded with zeros rather than EOS's ones.
    assert.throws(() => decodeAll(decoder(), hex('04 81 18')), /padding other than EOS/)
    // Padding of eight or more bits.
    assert.throws(() => decodeAll(decoder(), hex('04 82 1f ff')), /padding other than EOS/)
    // EOS itself (30 ones) in a string.
    assert.throws(() => decodeAll(decoder(), hex('04 84 ff ff ff fc')), /EOS/)
  })
})

describe('HPACK request blocks', () => {
  it('reads back as written, static names and values used where they exist', () => {
    const fields: Array<[string, string]> = [
      [':method', 'POST'],
      [':scheme', 'http'],
      [':path', '/etcdserverpb.KV/Range'],
      [':authority', '127.0.0.1:2379'],
      ['content-type', 'application/grpc'],
      ['te', 'trailers'],
      ['x-long', 'v'.repeat(300)],
    ]
    const block = encodeRequestHeaders(fields)
    assert.equal(block[0], 0x83, ':method POST is static index 3')
    assert.deepEqual(decodeAll(new HpackDecoder(), block), fields)
  })
})
