/**
 * The parts of @marcbachmann/cel-js's checker and evaluator that a macro
 * (a function with `ast` parameters) is handed. The library documents the
 * calls (`checker.check(node, ctx)`, `evaluator.run(node, ctx)`) but types
 * them loosely; these interfaces name what the macros here use.
 */
import type { ASTNode } from '@marcbachmann/cel-js'

/** A type as the checker sees it: `kind` is 'list', 'map', 'dyn', 'primitive', 'message', ... */
export interface CelType {
  readonly kind: string
  readonly name: string
  readonly valueType?: CelType
  readonly keyType?: CelType
}

export interface CheckContext {
  forkWithVariable(name: string, type: CelType): IterationContext
}

/** A context that adds one variable; at evaluation it is re-parented and given the variable's value. */
export interface IterationContext extends CheckContext {
  reuse(parent: unknown): IterationContext
  setIterValue(value: unknown, evaluator: Evaluator): IterationContext
}

export interface Checker {
  check(node: ASTNode, ctx: CheckContext): CelType
  getType(name: string): CelType
  createError(code: string, message: string, node: ASTNode): Error
  readonly registry: {
    getListType(valueType: CelType): CelType
    getMapType(keyType: CelType, valueType: CelType): CelType
  }
}

export interface Evaluator {
  run(node: ASTNode, ctx: unknown): unknown
}

/** What a macro handler returns: checked once, evaluated on every run. */
export interface Macro {
  typeCheck(checker: Checker, macro: Macro, ctx: CheckContext): CelType
  evaluate(evaluator: Evaluator, macro: Macro, ctx: unknown): unknown
  async?: boolean
}

/** What a macro handler is given when the parser meets a call it owns. */
export interface MacroCall {
  args: ASTNode[]
  receiver: ASTNode | null
  ast: ASTNode
}

/** An AST node's metadata setter, which the library's nodes carry but its types leave out. */
export function setNodeMeta(node: ASTNode, key: 'macro' | 'async', value: unknown): void {
  ;(node as unknown as { setMeta(key: string, value: unknown): unknown }).setMeta(key, value)
}

/** Whether a checked type accepts a value of the named primitive type (`dyn` accepts anything). */
export function accepts(type: CelType, name: string): boolean {
  return type.kind === 'dyn' || type.name === name
}

/** The identifier an iteration variable argument names; macros refuse anything else. */
export function iterationVariable(node: ASTNode | undefined, checker: Checker, macroName: string): string {
  if (node?.op === 'id') return node.args
  throw checker.createError('invalid_macro_argument', `${macroName} invalid iteration variable`, node as ASTNode)
}
