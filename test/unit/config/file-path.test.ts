import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cleanPath, directoryOf, resolveFrom } from '../../../core/config/file-path.js'

describe('file references inside config files', () => {
  it('resolves a relative path against the directory of the file that names it', () => {
    assert.equal(resolveFrom('/etc/platform/admission.yaml', 'rate.yaml'), '/etc/platform/rate.yaml')
    assert.equal(resolveFrom('/etc/platform/admission.yaml', './pki/../ca.pem'), '/etc/platform/ca.pem')
    assert.equal(resolveFrom('conf/webhook.yaml', '../../token'), '../token')
  })

  it('keeps absolute paths, and relative ones when the file was named without a directory', () => {
    assert.equal(resolveFrom('/etc/platform/a.yaml', '/var/lib/x'), '/var/lib/x')
    assert.equal(resolveFrom('/etc/platform/a.yaml', 'C:\\certs\\ca.pem'), 'C:\\certs\\ca.pem')
    assert.equal(resolveFrom('a.yaml', 'x/y'), 'x/y')
  })

  it("cleans paths as Go's filepath.Clean does", () => {
    assert.equal(cleanPath('/a//b/./c/..'), '/a/b')
    assert.equal(cleanPath('/../x'), '/x')
    assert.equal(cleanPath('a/../..'), '..')
    assert.equal(cleanPath(''), '.')
    assert.equal(directoryOf('/config.yaml'), '/')
    assert.equal(directoryOf('config.yaml'), '.')
  })
})
