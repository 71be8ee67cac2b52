/**
 * The rules of a LimitRange, worded as upstream's ValidateLimitRange words
 * them: one item per type, resource names that fit the type, and for each
 * resource min <= defaultRequest <= default <= max, a limit/request ratio of
 * at least 1 that max/min allows, and equal defaults where a resource may
 * not be overcommitted. Upstream walks the resources of an item in map
 * order; here they come in the order the item names them.
 */
import { record } from '../columns/values.js'
import { duplicate, type FieldError, type FieldPath, fieldPath, forbiddenField, invalid, required } from '../../machinery/field.js'
import { isQualifiedName } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { goQuantity, quantityOf, quantityString, scaledValue } from './go-quantity.js'
import { isOvercommitAllowed, validateContainerResourceName, validateResourceName } from './resource-names.js'
import { appendAll } from '../../machinery/append-all.js'
import { type Checkpointed, checkpointDue } from '../../machinery/time-slice.js'

type Obj = Record<string, unknown>

const STANDARD_TYPES = ['Pod', 'Container', 'PersistentVolumeClaim']
const LISTS = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const
type ListName = (typeof LISTS)[number]

/** Upstream's resource.MaxMilliValue: beyond it, milli-units overflow an int64. */
const MAX_MILLI_VALUE = (2n ** 63n - 1n) / 1000n


function validateTypeName(type: string, path: FieldPath): FieldError[] {
  const errs = isQualifiedName(type).map((msg) => invalid(path, type, msg))
  if (errs.length === 0 && !type.includes('/') && !STANDARD_TYPES.includes(type))
    errs.push(invalid(path, type, 'must be a standard limit type or fully qualified'))
  return errs
}

/** Pod and Container items hold compute resources; other types (claims) may hold storage too. */
function validateName(type: string, name: string, path: FieldPath): FieldError[] {
  return type === 'Pod' || type === 'Container' ? validateContainerResourceName(name, path) : validateResourceName(name, path)
}

/** The ratio's check against max/min, in milli-units unless a value is too large for them, as upstream computes it. */
function ratioAboveMaxOverMin(ratio: unknown, min: unknown, max: unknown): string | undefined {
  const [r, lo, hi] = [quantityOf(ratio), quantityOf(min), quantityOf(max)]
  let ratioValue = Number(scaledValue(r, 0))
  let minValue = scaledValue(lo, 0)
  let maxValue = scaledValue(hi, 0)
  if (scaledValue(r, 0) < MAX_MILLI_VALUE && minValue < MAX_MILLI_VALUE && maxValue < MAX_MILLI_VALUE) {
    ratioValue = Number(scaledValue(r, -3)) / 1000
    minValue = scaledValue(lo, -3)
    maxValue = scaledValue(hi, -3)
  }
  const limit = Number(maxValue) / Number(minValue)
  return ratioValue > limit ? `ratio ${quantityString(ratio)} is greater than max/min = ${limit.toFixed(6)}` : undefined
}

function validateRelations(lists: Record<ListName, Obj>, key: string, at: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  const has = (list: ListName): boolean => key in lists[list]
  const value = (list: ListName): unknown => lists[list][key]
  const text = (list: ListName): string => quantityString(value(list))
  const greater = (a: ListName, b: ListName): boolean => has(a) && has(b) && quantityOf(value(a)).compare(quantityOf(value(b))) > 0
  const path = (list: ListName): FieldPath => at.child(list).key(key)
  if (greater('min', 'max')) errs.push(invalid(path('min'), goQuantity(value('min')), `min value ${text('min')} is greater than max value ${text('max')}`))
  if (greater('min', 'defaultRequest'))
    errs.push(invalid(path('defaultRequest'), goQuantity(value('defaultRequest')), `min value ${text('min')} is greater than default request value ${text('defaultRequest')}`))
  if (greater('defaultRequest', 'max'))
    errs.push(invalid(path('defaultRequest'), goQuantity(value('defaultRequest')), `default request value ${text('defaultRequest')} is greater than max value ${text('max')}`))
  if (greater('defaultRequest', 'default'))
    errs.push(invalid(path('defaultRequest'), goQuantity(value('defaultRequest')), `default request value ${text('defaultRequest')} is greater than default limit value ${text('default')}`))
  // Upstream shows min (and max) as the bad value of these two, on the default's path.
  if (greater('min', 'default')) errs.push(invalid(path('default'), goQuantity(value('min')), `min value ${text('min')} is greater than default value ${text('default')}`))
  if (greater('default', 'max')) errs.push(invalid(path('default'), goQuantity(value('max')), `default value ${text('default')} is greater than max value ${text('max')}`))
  const ratioPath = path('maxLimitRequestRatio')
  if (has('maxLimitRequestRatio') && quantityOf(value('maxLimitRequestRatio')).compare(quantityOf('1')) < 0)
    errs.push(invalid(ratioPath, goQuantity(value('maxLimitRequestRatio')), `ratio ${text('maxLimitRequestRatio')} is less than 1`))
  if (has('maxLimitRequestRatio') && has('min') && has('max')) {
    const problem = ratioAboveMaxOverMin(value('maxLimitRequestRatio'), value('min'), value('max'))
    if (problem) errs.push(invalid(ratioPath, goQuantity(value('maxLimitRequestRatio')), problem))
  }
  if (!isOvercommitAllowed(key) && has('default') && has('defaultRequest') && quantityOf(value('default')).compare(quantityOf(value('defaultRequest'))) !== 0)
    errs.push(
      invalid(path('defaultRequest'), goQuantity(value('defaultRequest')), `default value ${text('default')} must equal to defaultRequest value ${text('defaultRequest')} in ${key}`),
    )
  return errs
}

function validateItem(item: Obj, at: FieldPath, seenTypes: Set<string>): FieldError[] {
  const type = typeof item['type'] === 'string' ? item['type'] : ''
  const errs = validateTypeName(type, at.child('type'))
  if (seenTypes.has(type)) errs.push(duplicate(at.child('type'), type))
  seenTypes.add(type)
  const lists = Object.fromEntries(LISTS.map((l) => [l, record(item[l])])) as Record<ListName, Obj>
  const keys = new Set<string>()
  const collect = (list: ListName): void => {
    for (const name of Object.keys(lists[list])) {
      appendAll(errs, validateName(type, name, at.child(list).key(name)))
      keys.add(name)
    }
  }
  collect('max')
  collect('min')
  if (type === 'Pod') {
    if (Object.keys(lists.default).length) errs.push(forbiddenField(at.child('default'), "may not be specified when `type` is 'Pod'"))
    if (Object.keys(lists.defaultRequest).length) errs.push(forbiddenField(at.child('defaultRequest'), "may not be specified when `type` is 'Pod'"))
    // Not part of the relations below: upstream leaves a Pod item's defaults out of them.
    lists.default = {}
    lists.defaultRequest = {}
  } else {
    collect('default')
    collect('defaultRequest')
  }
  if (type === 'PersistentVolumeClaim' && !('storage' in lists.min) && !('storage' in lists.max))
    errs.push(required(at.child('limits'), 'either minimum or maximum storage value is required, but neither was provided'))
  collect('maxLimitRequestRatio')
  for (const key of keys) appendAll(errs, validateRelations(lists, key, at))
  return errs
}

/** A LimitRange's items, in checkpointed steps: a body of 3 MB holds a million of them. */
export function* validateLimitRangeInSteps(limitRange: KubeObject): Checkpointed<FieldError[]> {
  const limits = record(limitRange['spec'])['limits']
  const items: unknown[] = Array.isArray(limits) ? limits : []
  const seenTypes = new Set<string>()
  const path = fieldPath('spec').child('limits')
  const errs: FieldError[] = []
  for (let i = 0; i < items.length; i++) {
    appendAll(errs, validateItem(record(items[i]), path.index(i), seenTypes))
    if (checkpointDue()) yield
  }
  return errs
}
