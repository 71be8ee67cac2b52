import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type BodyObserver, observableStream, observeBody, readDirectly } from '../../../core/http/observed-body.js'

const bytes = (text: string) => new TextEncoder().encode(text)

/** A body of these chunks, observable or a plain stream, and what its observers were told. */
function body(chunks: string[], observable: boolean) {
  const left = chunks.map(bytes)
  let cancelled = false
  const stream = observable
    ? observableStream({ pull: () => Promise.resolve(left.shift()), cancel: () => void (cancelled = true) })
    : new ReadableStream<Uint8Array>({
        pull(c) {
          const next = left.shift()
          if (next) c.enqueue(next)
          else c.close()
        },
        cancel: () => void (cancelled = true),
      })
  return { stream, cancelled: () => cancelled }
}

function recorder(): { seen: string[]; observer: BodyObserver } {
  const seen: string[] = []
  return { seen, observer: { onChunk: (n) => seen.push(`chunk ${n}`), onClose: () => seen.push('close'), onCancel: () => seen.push('cancel') } }
}

for (const observable of [true, false]) {
  const kind = observable ? 'an observable body' : 'any other body'

  test(`${kind}: every observer hears each chunk and the end, and the reader gets the same bytes`, async () => {
    const { stream } = body(['ab', 'cde'], observable)
    const first = recorder()
    const second = recorder()
    const observed = observeBody(observeBody(stream, first.observer), second.observer)
    assert.equal(observed === stream, observable, 'an observable body is watched in place, any other is piped')
    assert.equal(await new Response(observed).text(), 'abcde')
    assert.deepEqual(first.seen, ['chunk 2', 'chunk 3', 'close'])
    assert.deepEqual(second.seen, ['chunk 2', 'chunk 3', 'close'])
  })

  test(`${kind}: a consumer that goes away tells the observers (and cancels an observable source)`, async () => {
    const { stream, cancelled } = body(['ab', 'cde'], observable)
    const r = recorder()
    const reader = observeBody(stream, r.observer).getReader()
    assert.deepEqual(await reader.read(), { done: false, value: bytes('ab') })
    await reader.cancel()
    // A pipe reads ahead: its source may have ended before the cancel reached it.
    if (observable) assert.equal(cancelled(), true)
    assert.deepEqual(r.seen, ['chunk 2', 'cancel'])
  })
}

test('an observable body read directly gives its chunks and tells every observer, as its stream would', async () => {
  const { stream } = body(['ab', 'cde'], true)
  const r = recorder()
  const direct = readDirectly(observeBody(stream, r.observer))
  assert.ok(direct)
  assert.equal(stream.locked, true, 'nothing else reads it')
  const got: string[] = []
  for (let chunk = await direct.pull(); chunk !== undefined; chunk = await direct.pull()) got.push(new TextDecoder().decode(chunk))
  assert.deepEqual(got, ['ab', 'cde'])
  assert.deepEqual(r.seen, ['chunk 2', 'chunk 3', 'close'])
})

test('a body read directly whose consumer goes away cancels its source and tells the observers', async () => {
  const { stream, cancelled } = body(['ab', 'cde'], true)
  const r = recorder()
  const direct = readDirectly(observeBody(stream, r.observer))!
  await direct.pull()
  direct.cancel()
  assert.equal(cancelled(), true)
  assert.equal(await direct.pull(), undefined)
  assert.deepEqual(r.seen, ['chunk 2', 'cancel'])
})

test('only an observable body nobody reads yet can be read directly', () => {
  assert.equal(readDirectly(body(['ab'], false).stream), undefined)
  const { stream } = body(['ab'], true)
  stream.getReader()
  assert.equal(readDirectly(stream), undefined)
})

test('a source that can be taken from is read directly without promises, the observers hearing the same', () => {
  const ready = [bytes('ab')]
  let wake: (() => void) | undefined
  let ended = false
  const stream = observableStream({
    pull: () => Promise.resolve(ready.shift()),
    cancel: () => {},
    take: () => ready.shift() ?? (ended ? undefined : null),
    whenReady: (listener) => void (wake = listener),
  })
  const r = recorder()
  const direct = readDirectly(observeBody(stream, r.observer))!
  assert.ok(direct.take && direct.whenReady)
  assert.deepEqual(direct.take(), bytes('ab'))
  assert.equal(direct.take(), null, 'nothing ready yet')
  let woken = 0
  direct.whenReady(() => woken++)
  ready.push(bytes('cde'))
  wake!()
  assert.equal(woken, 1)
  assert.deepEqual(direct.take(), bytes('cde'))
  ended = true
  assert.equal(direct.take(), undefined)
  assert.deepEqual(r.seen, ['chunk 2', 'chunk 3', 'close'])
  direct.whenReady(() => woken++)
  assert.equal(woken, 2, 'an ended body wakes its consumer at once')
})
