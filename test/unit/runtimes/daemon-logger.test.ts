/**
 * The daemon's logger (runtimes/node/daemon/logging.ts) writing to files in place
 * of standard output and error: each format's lines, the verbosity applied,
 * and the split text streams with the info buffer.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { verbose } from '../../../core/logging/verbosity.js'
import { daemonLogger, type LoggingOptions } from '../../../runtimes/node/daemon/logging.js'

const base: LoggingOptions = { format: 'text', verbosity: { v: 0, vmodule: [] }, flushFrequencyMs: 5000, splitStream: false, infoBufferSize: 0 }

/** Runs `log` with a daemon logger whose standard output and error are files; their text. */
function written(options: Partial<LoggingOptions>, log: (logger: ReturnType<typeof daemonLogger>['logger']) => void, beforeClose?: (read: () => { out: string; err: string }) => void): { out: string; err: string } {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-logger-'))
  const stdoutFd = openSync(join(dir, 'out'), 'w')
  const stderrFd = openSync(join(dir, 'err'), 'w')
  const read = () => ({ out: readFileSync(join(dir, 'out'), 'utf8'), err: readFileSync(join(dir, 'err'), 'utf8') })
  try {
    const { logger, close } = daemonLogger({ ...base, ...options }, undefined, { stdoutFd, stderrFd })
    log(logger)
    beforeClose?.(read)
    close()
    return read()
  } finally {
    closeSync(stdoutFd)
    closeSync(stderrFd)
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('daemon logger', () => {
  it('writes klog text lines to standard error by default, V(n) only up to -v, debug as V(4)', () => {
    const { out, err } = written({ verbosity: { v: 3, vmodule: [] } }, (logger) => {
      logger.info({ url: 'https://127.0.0.1:6443' }, 'Serving')
      verbose(logger, 3, 'httplog')?.({ resp: 200 }, 'HTTP')
      verbose(logger, 4, 'httplog')?.({}, 'hidden')
      logger.debug({}, 'hidden too')
      logger.error({ err: 'EOF' }, 'broken')
    })
    assert.equal(out, '')
    const lines = err.trim().split('\n')
    assert.equal(lines.length, 3, err)
    assert.match(lines[0]!, /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ \?\?\?:1\] "Serving" url="https:\/\/127\.0\.0\.1:6443"$/)
    assert.match(lines[1]!, /^I.* httplog\.ts:1\] "HTTP" resp=200$/)
    assert.match(lines[2]!, /^E.*\] "broken" err="EOF"$/)
  })

  it("writes upstream's JSON: ts in epoch milliseconds, caller, msg, v on info lines, no level", () => {
    const { err } = written({ format: 'json', verbosity: { v: 0, vmodule: [{ pattern: 'http*', verbosity: 3 }] } }, (logger) => {
      verbose(logger, 3, 'httplog')?.({ resp: 200 }, 'HTTP')
      logger.warn({}, 'careful')
      logger.error({ err: 'EOF' }, 'broken')
    })
    const [http, warn, error] = err.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    assert.equal(typeof http?.ts, 'number')
    assert.ok(Math.abs((http?.ts as number) - Date.now()) < 60_000)
    assert.deepEqual({ ...http, ts: 0 }, { ts: 0, caller: 'httplog.ts:1', resp: 200, v: 3, msg: 'HTTP' })
    assert.equal(warn?.v, 0)
    assert.equal(error?.v, undefined)
    assert.equal(error?.err, 'EOF')
    assert.equal(error?.level, undefined)
  })

  it('splits text streams: errors to standard error, the rest to standard output, held up to the buffer size', () => {
    const { out, err } = written(
      { splitStream: true, infoBufferSize: 1 << 20 },
      (logger) => {
        logger.info({}, 'kept back')
        logger.error({}, 'at once')
      },
      (read) => {
        const now = read()
        assert.equal(now.out, '', 'info lines wait in the buffer')
        assert.match(now.err, /"at once"/)
      },
    )
    assert.match(out, /^I.*"kept back"\n$/, 'flushed on close')
    assert.doesNotMatch(err, /kept back/)
  })
})

describe('daemon logger behind a pipe whose reader is slow', () => {
  it('keeps the lines a full pipe refuses (EAGAIN) and writes them in order once it drains, without throwing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-logger-'))
    const fifo = join(dir, 'stderr')
    execFileSync('mkfifo', [fifo])
    // Both ends non-blocking: a write to the full pipe answers EAGAIN, as a daemon's stderr pipe does.
    const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const writeFd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
    try {
      const { logger, close } = daemonLogger(base, undefined, { stdoutFd: writeFd, stderrFd: writeFd })
      // Some 3 MB of warnings, far past what the pipe holds (64 KiB), while nobody reads.
      const lines = 20_000
      for (let i = 0; i < lines; i++) logger.warn({ i, padding: 'x'.repeat(100) }, 'cannot record an event')
      let text = ''
      const chunk = Buffer.alloc(1 << 16)
      for (let rounds = 0; !text.includes(`i=${lines - 1} `) && rounds < 2000; rounds++) {
        try {
          const n = readSync(readFd, chunk)
          text += chunk.subarray(0, n).toString()
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
      }
      close()
      const numbers = [...text.matchAll(/ i=(\d+) /g)].map((m) => Number(m[1]))
      assert.equal(numbers.length, lines)
      assert.ok(numbers.every((n, at) => n === at), 'lines out of order')
    } finally {
      closeSync(writeFd)
      closeSync(readFd)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
