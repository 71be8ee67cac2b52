/**
 * Tolerations as upstream's core ValidateTolerations checks them (a pod's
 * spec.tolerations, a RuntimeClass's scheduling.tolerations): a qualified
 * key, an operator of Equal or Exists (an empty key only with Exists), a
 * label-syntax value that Exists leaves empty, a known effect, and
 * tolerationSeconds only with NoExecute. The comparison operators of later
 * releases (Lt, Gt) are not part of 1.32.
 */
import { type FieldError, type FieldPath, invalid, notSupported } from '../../machinery/field.js'
import { GoLiteral, goPointerText, goQuote } from '../../machinery/go-format.js'
import { isQualifiedName, isValidLabelValue } from '../../machinery/names.js'
import { list, record, text } from '../columns/values.js'

const OPERATORS = ['Equal', 'Exists']
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute']

/** `%#v` of a core.Toleration, the value upstream shows for a refused one. */
export function goToleration(toleration: unknown): GoLiteral {
  const t = record(toleration)
  const seconds = goPointerText('int64', t['tolerationSeconds'], String)
  return new GoLiteral(
    `core.Toleration{Key:${goQuote(text(t['key']))}, Operator:${goQuote(text(t['operator']))}, Value:${goQuote(text(t['value']))}, Effect:${goQuote(text(t['effect']))}, TolerationSeconds:${seconds}}`,
  )
}

function validateToleration(toleration: unknown, path: FieldPath): FieldError[] {
  const t = record(toleration)
  const [key, operator, value, effect] = [text(t['key']), text(t['operator']), text(t['value']), text(t['effect'])]
  const errs: FieldError[] = []
  if (key) for (const msg of isQualifiedName(key)) errs.push(invalid(path.child('key'), key, msg))
  if (!key && operator !== 'Exists')
    errs.push(invalid(path.child('operator'), operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
  if (t['tolerationSeconds'] !== undefined && t['tolerationSeconds'] !== null && effect !== 'NoExecute')
    errs.push(invalid(path.child('effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
  if (operator === 'Equal' || operator === '') {
    // An empty operator means Equal.
    const valueErrs = isValidLabelValue(value)
    if (valueErrs.length) errs.push(invalid(path.child('operator'), value, valueErrs.join(';')))
  } else if (operator === 'Exists') {
    if (value) errs.push(invalid(path.child('operator'), goToleration(t), "value must be empty when `operator` is 'Exists'"))
  } else {
    errs.push(notSupported(path.child('operator'), operator, OPERATORS))
  }
  // An empty effect matches every effect.
  if (effect && !EFFECTS.includes(effect)) errs.push(notSupported(path.child('effect'), effect, EFFECTS))
  return errs
}

export function validateTolerations(tolerations: unknown, path: FieldPath): FieldError[] {
  return list(tolerations).flatMap((t, i) => validateToleration(t, path.index(i)))
}
