import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCidrList, parseIPAddress, parsePortRange } from '../../../../core/options/flags/addresses.js'
import { formatIP, isUnspecified, parseCidr, parseIP } from '../../../../core/machinery/ip.js'

describe('network flag values', () => {
  it('reads IPv4 and IPv6 addresses as Go does, and nothing else', () => {
    const good: [string, 4 | 6, string][] = [
      ['127.0.0.1', 4, '127.0.0.1'],
      ['0.0.0.0', 4, '0.0.0.0'],
      ['255.255.255.255', 4, '255.255.255.255'],
      ['::', 6, '::'],
      ['::1', 6, '::1'],
      ['fe80::1:2', 6, 'fe80::1:2'],
      ['2001:DB8:0:0:1:0:0:1', 6, '2001:db8::1:0:0:1'],
      ['1:2:3:4:5:6:7:8', 6, '1:2:3:4:5:6:7:8'],
      ['::ffff:192.0.2.1', 4, '192.0.2.1'],
      ['64:ff9b::192.0.2.1', 6, '64:ff9b::c000:201'],
    ]
    for (const [text, family, formatted] of good) {
      const ip = parseIP(text)
      assert.ok(ip, text)
      assert.equal(ip.family, family, text)
      assert.equal(formatIP(ip), formatted, text)
    }
    for (const bad of ['', 'localhost', '300.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1:2:3:4:5:6:7:8:9', '1::2::3', ':::', 'fe80::1%eth0', '12345::', '1.2.3.4:80']) {
      assert.equal(parseIP(bad), undefined, bad)
    }
    assert.equal(isUnspecified(parseIP('::')!), true)
    assert.equal(isUnspecified(parseIP('10.0.0.1')!), false)
  })

  it('reads IP flags, blank meaning unset', () => {
    assert.deepEqual(parseIPAddress('10.0.0.1'), { value: '10.0.0.1' })
    assert.deepEqual(parseIPAddress(''), { value: '' })
    assert.deepEqual(parseIPAddress('localhost'), { reason: 'failed to parse IP: "localhost"' })
  })

  it('reads CIDR ranges, clearing host bits', () => {
    assert.deepEqual(parseCidr('10.0.0.1/24'), { family: 4, network: '10.0.0.0', prefix: 24, bits: 32 })
    assert.deepEqual(parseCidr('fd00::1/108'), { family: 6, network: 'fd00::', prefix: 108, bits: 128 })
    assert.deepEqual(parseCidr('0.0.0.0/0'), { family: 4, network: '0.0.0.0', prefix: 0, bits: 32 })
    for (const bad of ['10.0.0.0', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/-1', '10.0.0.0/08', 'x/8']) assert.equal(parseCidr(bad), undefined, bad)
  })

  it('reads comma lists of CIDRs; counting and families are for the rules', () => {
    const dual = parseCidrList('10.96.0.0/12, fd00::/108')
    assert.ok('value' in dual)
    assert.deepEqual(
      dual.value.map((c) => [c.family, c.network, c.prefix]),
      [
        [4, '10.96.0.0', 12],
        [6, 'fd00::', 108],
      ],
    )
    assert.deepEqual(parseCidrList(''), { value: [] })
    assert.deepEqual(parseCidrList('10.0.0.0/24,10.0.0.0'), { reason: '"10.0.0.0" is not a valid CIDR' })
  })

  it('reads port ranges inclusively, in the notations upstream accepts', () => {
    const good: [string, { first: number; last: number } | null][] = [
      ['30000-32767', { first: 30000, last: 32767 }],
      [' 1-65535 ', { first: 1, last: 65535 }],
      ['8080', { first: 8080, last: 8080 }],
      ['30000+100', { first: 30000, last: 30100 }],
      ['', null],
    ]
    for (const [text, value] of good) assert.deepEqual(parsePortRange(text), { value }, text)
    const bad: [string, string][] = [
      ['32767-30000', 'end port cannot be less than start port: 32767-30000'],
      ['30000-70000', 'the port range cannot be greater than 65535: 30000-70000'],
      ['0-100', 'the port range must start at 1 or above: 0-100'],
      ['a-b', 'strconv.Atoi: parsing "a": invalid syntax'],
      ['1-2+3', 'unable to parse port range: 1-2+3'],
      ['30000-', 'strconv.Atoi: parsing "": invalid syntax'],
    ]
    for (const [text, reason] of bad) assert.deepEqual(parsePortRange(text), { reason }, text)
  })
})
