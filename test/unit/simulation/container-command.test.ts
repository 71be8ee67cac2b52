import assert from 'node:assert/strict'
import { test } from 'node:test'
import { containerProcess } from '../../../core/simulation/container-command.js'

const run = (command?: string[], args?: string[]) => containerProcess({ name: 'c', image: 'busybox', ...(command ? { command } : {}), ...(args ? { args } : {}) })

test('sleep runs that long, with its units, or forever', () => {
  assert.deepEqual(run(['sleep', '30']), { runSeconds: 30 })
  assert.deepEqual(run(['/bin/sleep'], ['1.5']), { runSeconds: 1.5 })
  assert.deepEqual(run(['sleep', '2m']), { runSeconds: 120 })
  assert.deepEqual(run(['sleep', 'infinity']), { runSeconds: Infinity })
  assert.deepEqual(run(['sh', '-c', 'sleep 1h']), { runSeconds: 3600 })
})

test('a shell exits with what its script says; true and false as themselves', () => {
  assert.deepEqual(run(['/bin/sh', '-c', 'exit 1']), { exitCode: 1 })
  assert.deepEqual(run(undefined, ['bash', '-c', ' exit 3; ']), { exitCode: 3 })
  assert.deepEqual(run(['sh', '-c', 'exit 256']), { exitCode: 0 }, 'a code is a byte, as a shell makes it')
  assert.deepEqual(run(['true']), { exitCode: 0 })
  assert.deepEqual(run(['/bin/false']), { exitCode: 1 })
})

test('anything else is left to the node’s defaults', () => {
  for (const command of [undefined, ['nginx'], ['exit', '1'], ['sh', '-c', 'exit $(( $RANDOM / 16384 ))'], ['sh', '-c', 'sleep 5 && exit 1'], ['sleep', '5', '6'], ['sleep', 'soon']])
    assert.equal(run(command), undefined, JSON.stringify(command))
  assert.equal(containerProcess('not a container'), undefined)
})
