/**
 * What the cost of a call is computed from, for each argument: its checked
 * type, where its value comes from (the path from a variable through
 * fields, `@items`, `@keys` and `@values`, by which the size of schema data
 * is looked up), and the size the expression itself gives it (a literal, a
 * list built inline, the result of a call whose size is known). These are
 * cel-go's checker.AstNode and the two ways of estimating a size: cel-go's
 * own, which treats fixed-size types as size 1, and the Kubernetes
 * libraries', which does not.
 */
import type { CelType } from '../library/macro-api.js'
import { type Range, UNBOUNDED, range } from './range.js'

/**
 * Gives the size of what a node holds, when the use site knows it: a CRD
 * looks the path up in its schema (`['self', 'spec', 'items', '@items']`),
 * other uses may go by type. Upstream's EstimateSize.
 */
export type SizeEstimator = (node: { readonly path: readonly string[] | undefined; readonly type: CelType | undefined }) => Range | undefined

export interface CostNode {
  /** The checked type; undefined where the checker left none (treated as dyn). */
  readonly type: CelType | undefined
  readonly path: readonly string[] | undefined
  readonly computed: Range | undefined
  /** A literal's value, for the few estimates that read one (the limit of `split`). */
  readonly literal?: unknown
  /** The size of a bound variable's value, consulted after the use site's estimate. */
  readonly local?: Range
}

export const kindOf = (t: CelType | undefined): string => t?.kind ?? 'dyn'

/** The name of a primitive or message type (`string`, `bytes`, `net.IP`); '' for lists, maps and dyn. */
export const typeName = (t: CelType | undefined): string => (t && (t.kind === 'primitive' || t.kind === 'message') ? t.name : '')

const SCALARS = new Set(['bool', 'int', 'uint', 'double', 'google.protobuf.Timestamp', 'google.protobuf.Duration'])

/** Whether values of the type always have size one (cel-go's isScalar): not strings, bytes, lists or maps. */
export const isScalar = (t: CelType | undefined): boolean => SCALARS.has(typeName(t))

export class Sizes {
  constructor(private readonly estimator: SizeEstimator) {}

  /** cel-go's sizeEstimate: what the expression says, else the use site's estimate, else 1 for fixed-size types. */
  of(node: CostNode): Range {
    return node.computed ?? this.estimator(node) ?? (isScalar(node.type) ? range(1) : (node.local ?? UNBOUNDED))
  }

  /** The Kubernetes libraries' sizeEstimate: as `of`, without the fixed-size rule. */
  library(node: CostNode): Range {
    return node.computed ?? this.estimator(node) ?? node.local ?? UNBOUNDED
  }

  /** The elements of a list, as a node of their own (the Kubernetes libraries' listElementNode). */
  element(list: CostNode): CostNode | undefined {
    if (kindOf(list.type) !== 'list') return undefined
    return { type: list.type?.valueType, path: list.path ? [...list.path, '@items'] : undefined, computed: undefined }
  }
}
