/**
 * Values as upstream's field errors print them: a struct, map or slice that
 * has no String method goes through Go's `%#v`, so a refused selector reads
 * `v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, ...}`.
 */
import { GoLiteral } from '../../validation/field.js'
import { isPlainObject } from '../object.js'

const quote = (s: unknown): string => JSON.stringify(typeof s === 'string' ? s : String(s ?? ''))

/** `%#v` of a map[string]string: keys sorted, as fmt prints maps; absent is the nil map. */
export function goStringMapText(value: unknown): string {
  if (!isPlainObject(value)) return 'map[string]string(nil)'
  const entries = Object.keys(value)
    .sort()
    .map((k) => `${quote(k)}:${quote(value[k])}`)
  return `map[string]string{${entries.join(', ')}}`
}

export const goStringMap = (value: unknown): GoLiteral => new GoLiteral(goStringMapText(value))

/** `%#v` of a []string; absent is the nil slice. */
export function goStringSliceText(value: unknown): string {
  if (!Array.isArray(value)) return '[]string(nil)'
  return `[]string{${value.map(quote).join(', ')}}`
}

function requirementText(r: unknown): string {
  const req = isPlainObject(r) ? r : {}
  return `v1.LabelSelectorRequirement{Key:${quote(req['key'])}, Operator:${quote(req['operator'])}, Values:${goStringSliceText(req['values'])}}`
}

/** `%#v` of a metav1.LabelSelector, the value upstream shows for a refused selector. */
export function goLabelSelector(selector: unknown): GoLiteral {
  if (!isPlainObject(selector)) return new GoLiteral('null')
  const expressions = selector['matchExpressions']
  const exprText = Array.isArray(expressions)
    ? `[]v1.LabelSelectorRequirement{${expressions.map(requirementText).join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)'
  return new GoLiteral(`v1.LabelSelector{MatchLabels:${goStringMapText(selector['matchLabels'])}, MatchExpressions:${exprText}}`)
}

/** `%#v` of an intstr.IntOrString: Type 0 holds an int, Type 1 a string. */
export function goIntOrStringText(value: unknown): string {
  if (typeof value === 'string') return `intstr.IntOrString{Type:1, IntVal:0, StrVal:${quote(value)}}`
  return `intstr.IntOrString{Type:0, IntVal:${typeof value === 'number' ? value : 0}, StrVal:""}`
}

export const goIntOrString = (value: unknown): GoLiteral => new GoLiteral(goIntOrStringText(value))

/**
 * `%#v` of a strategy struct holding a type and an optional pointer
 * (`apps.DeploymentStrategy{Type:"x", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}`).
 * Go prints a set pointer as its address, which no client can rely on; `&{...}` stands in for it.
 */
export function goStrategy(structName: string, pointerType: string, value: unknown): GoLiteral {
  const strategy = isPlainObject(value) ? value : {}
  const pointer = isPlainObject(strategy['rollingUpdate']) ? `(*${pointerType})(&{...})` : `(*${pointerType})(nil)`
  return new GoLiteral(`${structName}{Type:${quote(strategy['type'])}, RollingUpdate:${pointer}}`)
}
