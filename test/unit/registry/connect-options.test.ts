import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseRequestInfo } from '../../../core/machinery/request-info.js'
import { connectOptions, isConnectSubresource } from '../../../core/endpoints/connect-options.js'

function optionsOf(method: string, path: string): unknown {
  const url = new URL(`http://api${path}`)
  return connectOptions(parseRequestInfo(method, url), url.searchParams)
}

describe('the options object of a CONNECT', () => {
  it('reads exec flags as upstream converts query values: absent, 0 and false (any case) are false, anything else true', () => {
    assert.deepEqual(optionsOf('POST', '/api/v1/namespaces/ns/pods/web/exec?command=ls&command=-l&stdin=0&stdout=yes&stderr=FALSE&tty&container=app'), {
      kind: 'PodExecOptions',
      apiVersion: 'v1',
      stdout: true,
      tty: true,
      container: 'app',
      command: ['ls', '-l'],
    })
    assert.deepEqual(optionsOf('GET', '/api/v1/namespaces/ns/pods/web/exec'), { kind: 'PodExecOptions', apiVersion: 'v1', command: null })
    assert.deepEqual(optionsOf('POST', '/api/v1/namespaces/ns/pods/web/attach?stdin=true'), { kind: 'PodAttachOptions', apiVersion: 'v1', stdin: true })
  })

  it('reads ports repeated or comma-separated, and refuses what is no 16-bit number with 400', () => {
    assert.deepEqual(optionsOf('POST', '/api/v1/namespaces/ns/pods/web/portforward?ports=80,443&ports=8080'), {
      kind: 'PodPortForwardOptions',
      apiVersion: 'v1',
      ports: [80, 443, 8080],
    })
    assert.throws(() => optionsOf('POST', '/api/v1/namespaces/ns/pods/web/portforward?ports=70000'), {
      code: 400,
      message: 'cannot convert to []int32: strconv.ParseUint: parsing "70000": value out of range',
    })
    assert.throws(() => optionsOf('POST', '/api/v1/namespaces/ns/pods/web/portforward?ports=-1'), { code: 400 })
  })

  it('takes a proxy path from the URL after the subresource, keeping a trailing slash', () => {
    assert.deepEqual(optionsOf('GET', '/api/v1/nodes/n1/proxy/logs/syslog'), { kind: 'NodeProxyOptions', apiVersion: 'v1', path: '/logs/syslog' })
    assert.deepEqual(optionsOf('GET', '/api/v1/namespaces/ns/services/web:80/proxy/api/'), { kind: 'ServiceProxyOptions', apiVersion: 'v1', path: '/api/' })
    assert.deepEqual(optionsOf('GET', '/api/v1/namespaces/ns/pods/web/proxy'), { kind: 'PodProxyOptions', apiVersion: 'v1' })
    assert.deepEqual(optionsOf('GET', '/api/v1/namespaces/ns/pods/web/proxy/'), { kind: 'PodProxyOptions', apiVersion: 'v1', path: '/' })
  })

  it('counts pods/log as a read, not a CONNECT', () => {
    assert.equal(isConnectSubresource('pods', 'log'), false)
    assert.equal(isConnectSubresource('pods', 'exec'), true)
    assert.equal(isConnectSubresource('services', 'proxy'), true)
    assert.equal(isConnectSubresource('services', 'exec'), false)
  })
})
