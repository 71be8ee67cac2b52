/**
 * `--help` without loading the daemon.
 *
 * envtest runs the bin with `--help` before every start (to see whether to
 * pass `--insecure-port`), so the help's cost is part of each test suite's
 * start. The text depends on nothing but the flag table (it is wrapped to a
 * fixed width), so the build writes it beside the daemon's script
 * (tools/bundle.ts), and the bins' file prints it from there: a bare Node
 * start, without compiling and evaluating the daemon's bundle first.
 *
 * Only the exact command lines below take this way; any other (flags
 * beside `--help`, `--help=true`) goes through the daemon's own parsing,
 * which prints the same text where it should. Without the file (run from
 * source) the daemon answers as well.
 */
import { readFileSync } from 'node:fs'

/** The help's file, beside the daemon's script. */
export const KEPT_HELP_FILE = 'daemon-help.txt'

const HELP_COMMAND_LINES = new Set(['--help', '-h'])

/** Prints the kept help and returns true when `argv` asks for the help alone and the file is there. */
export function printKeptHelp(argv: readonly string[], helpFile: string): boolean {
  if (argv.length !== 1 || !HELP_COMMAND_LINES.has(argv[0]!)) return false
  let text: string
  try {
    text = readFileSync(helpFile, 'utf8')
  } catch {
    return false
  }
  process.stdout.write(text)
  return true
}
