/**
 * Parsing and checking in one step, as the daemon needs them: a FlagError
 * carries the parse error, or every problem the rules found.
 */
import { type CommandLine, FlagError, parseCommandLine } from './parse.js'
import { validateFlags } from './rules/index.js'

export function readCommandLine(argv: readonly string[]): CommandLine {
  const command = parseCommandLine(argv)
  if (command.action !== 'run') return command
  const problems = validateFlags(command.flags)
  if (problems.length) throw new FlagError(problems)
  return command
}
