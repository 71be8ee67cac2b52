/**
 * A label selector's requirements folded per key, so that matching an
 * object costs a few lookups per label the object has, however many
 * requirements the selector holds (a selector in a URL may carry tens of
 * thousands; upstream checks them one by one on a goroutine of its own,
 * here every list on the thread would wait for it).
 *
 * Same answers as checking each requirement in turn: a requirement that
 * needs its key present (`=`, `in`, `exists`, `>`, `<`) fails on an absent
 * key; one that forbids values (`!=`, `notin`) or the key (`!`) holds for it.
 */
import type { LabelRequirement } from './label-selector.js'

interface KeyRule {
  /** Some requirement on this key needs it present. */
  required: boolean
  /** `!key`: present never matches. */
  forbidden: boolean
  /** Every `=`/`in` requirement: the value must be in each of these sets (made when the first comes). */
  allowed?: Array<ReadonlySet<string>>
  /** Every `!=`/`notin` value, together (made when the first comes: a selector may name 20000 keys). */
  excluded?: Set<string>
  /** The largest `>` bound and the smallest `<` bound, when any. */
  above?: bigint
  below?: bigint
}

export type ParseInt64 = (s: string) => bigint | undefined

export class LabelMatcher {
  private readonly rules = new Map<string, KeyRule>()
  /** The keys an object must have: more of them than it has labels cannot match. */
  private readonly requiredKeys = new Set<string>()

  constructor(private readonly parseInt64: ParseInt64) {}

  /** Folds one more requirement in. */
  add(r: LabelRequirement): void {
    let rule = this.rules.get(r.key)
    if (!rule) this.rules.set(r.key, (rule = { required: false, forbidden: false }))
    switch (r.operator) {
      case 'in':
      case '=':
      case '==':
        rule.required = true
        ;(rule.allowed ??= []).push(new Set(r.values))
        break
      case 'notin':
      case '!=':
        rule.excluded ??= new Set()
        for (const v of r.values) rule.excluded.add(v)
        break
      case 'exists':
        rule.required = true
        break
      case '!':
        rule.forbidden = true
        break
      case 'gt':
      case 'lt': {
        rule.required = true
        // Upstream's Matches: a bound that is not a single integer matches nothing.
        const bound = r.values.length === 1 ? this.parseInt64(r.values[0]!) : undefined
        if (bound === undefined) (rule.allowed ??= []).push(new Set())
        else if (r.operator === 'gt') rule.above = rule.above === undefined || bound > rule.above ? bound : rule.above
        else rule.below = rule.below === undefined || bound < rule.below ? bound : rule.below
        break
      }
    }
    if (rule.required) this.requiredKeys.add(r.key)
  }

  matches(labels: Record<string, string>): boolean {
    let count = 0
    for (const key in labels) {
      if (!Object.hasOwn(labels, key)) continue
      count++
      const rule = this.rules.get(key)
      if (rule && !this.valueMatches(rule, labels[key]!)) return false
    }
    if (this.requiredKeys.size > count) return false
    for (const key of this.requiredKeys) if (!Object.hasOwn(labels, key)) return false
    return true
  }

  private valueMatches(rule: KeyRule, value: string): boolean {
    if (rule.forbidden || rule.excluded?.has(value)) return false
    if (rule.allowed) for (const set of rule.allowed) if (!set.has(value)) return false
    if (rule.above !== undefined || rule.below !== undefined) {
      const n = this.parseInt64(value)
      if (n === undefined) return false
      if (rule.above !== undefined && !(n > rule.above)) return false
      if (rule.below !== undefined && !(n < rule.below)) return false
    }
    return true
  }
}
