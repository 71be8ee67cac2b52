/**
 * Accept negotiation: the same answers as upstream's order of ranges
 * (goautoneg) for the headers clients send, found in one pass over the
 * header, without sorting its ranges, however many there are.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { firstAccepted, negotiateErrorEncoding, negotiateOutput, wantsAggregatedDiscovery } from '../../../core/http/media-types.js'

const TABLE_V1 = 'application/json;as=Table;v=v1;g=meta.k8s.io'
const DISCOVERY_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'

/** Header, then the object's format, the error's encoding and whether aggregated discovery is asked for. */
const HEADERS: [string | undefined, string, string, boolean][] = [
  [undefined, 'json', 'json', false],
  ['', 'json', 'json', false],
  ['*/*', 'json', 'json', false],
  ['application/json', 'json', 'json', false],
  ['application/yaml', 'yaml', 'yaml', false],
  ['application/vnd.kubernetes.protobuf', 'protobuf', 'protobuf', false],
  ['application/vnd.kubernetes.protobuf, */*', 'json', 'json', false],
  ['application/vnd.kubernetes.protobuf;q=0.9, application/json;q=0.8', 'json', 'json', false],
  [`${TABLE_V1},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`, 'table', 'json', false],
  ['application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json', 'partial-metadata', 'json', false],
  [`${DISCOVERY_V2},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`, 'json', 'json', true],
  [`${DISCOVERY_V2};q=0.5,application/json;q=0.9`, 'json', 'json', false],
  ['text/plain, */*;q=0.1', 'json', 'json', false],
  ['application/*;q=0.5, application/yaml;q=0.5', 'yaml', 'yaml', false],
  ['application/yaml;q=0.5, */*;q=0.5, application/json;q=0.4', 'yaml', 'yaml', false],
  ['application/json;q=abc, application/yaml', 'yaml', 'yaml', false],
  ['*/*;q=0.5, application/vnd.kubernetes.protobuf', 'json', 'json', false],
  [`${TABLE_V1};q=0.5, application/yaml`, 'yaml', 'yaml', false],
  ['application/json;q=2, application/yaml;q=3', 'yaml', 'yaml', false],
  ['application/json ; q = 0.5 , application/yaml;q= 0.6', 'json', 'json', false],
]

describe('Accept negotiation', () => {
  it('answers the headers clients send as upstream orders their ranges', () => {
    for (const [header, output, error, discovery] of HEADERS) {
      assert.equal(negotiateOutput(header, { allowTable: true }).kind, output, String(header))
      assert.equal(negotiateErrorEncoding(header), error, String(header))
      assert.equal(wantsAggregatedDiscovery(header), discovery, String(header))
    }
  })

  it('refuses with 406 a header that accepts nothing the server writes', () => {
    assert.throws(() => negotiateOutput('text/html', { allowTable: true }), { code: 406, reason: 'NotAcceptable' })
    assert.throws(() => negotiateOutput(TABLE_V1, { allowTable: false }), { code: 406, reason: 'NotAcceptable' })
  })

  it('reads a header of 60,000 ranges in one pass: each range looked at once, nothing sorted', () => {
    const header = Array.from({ length: 60_000 }, (_, i) => `a/x${i};q=0.${i % 10}`).join(',')
    let looked = 0
    let sorts = 0
    const sort = Array.prototype.sort
    Array.prototype.sort = function (this: unknown[], ...args: Parameters<typeof sort>) {
      sorts++
      return sort.apply(this, args)
    }
    try {
      assert.equal(
        firstAccepted(header, () => (looked++, undefined)),
        undefined,
      )
      assert.equal(negotiateErrorEncoding(header), 'json')
    } finally {
      Array.prototype.sort = sort
    }
    assert.equal(looked, 60_000)
    assert.equal(sorts, 0)
  })

  it('keeps the first of equal ranges and passes over those that cannot come before the answer found', () => {
    let looked = 0
    const answer = firstAccepted('application/json;q=0.9, application/yaml;q=0.9, application/json;q=0.1, */*;q=0.9', (r) => (looked++, r.subtype))
    assert.equal(answer, 'json')
    assert.equal(looked, 1)
  })
})
