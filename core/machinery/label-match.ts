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
  /** Every `=`/`in` requirement: the value must be this one, or in this set, for each (made when the first comes). */
  allowed?: Array<string | ReadonlySet<string>>
  /** Every `!=`/`notin` value, together (made when the first comes: a selector may name 20000 keys). */
  excluded?: Set<string>
  /** The largest `>` bound and the smallest `<` bound, when any. */
  above?: bigint
  below?: bigint
}

export type ParseInt64 = (s: string) => bigint | undefined

/**
 * Kept for as long as a watch that asked for it lives, so its size counts:
 * a selector of 150,000 `key=value` requirements (a megabyte of URL) held
 * some 75 MB when each became a rule with a set of its own, and forty such
 * watches ended the process. A key whose only requirement is one value (the
 * common case by far) is an entry of `equal` alone, some 50 bytes; a key
 * with anything more has a KeyRule.
 */
export class LabelMatcher {
  /** Keys whose one requirement is `key=value` (or `key in (value)`): the value they need. */
  private readonly equal = new Map<string, string>()
  private readonly rules = new Map<string, KeyRule>()
  /** How many keys an object must have: more of them than it has labels cannot match. */
  private requiredCount = 0

  constructor(private readonly parseInt64: ParseInt64) {}

  /** Folds one more requirement in. */
  add(r: LabelRequirement): void {
    const single = (r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1
    if (single && !this.rules.has(r.key) && !this.equal.has(r.key)) {
      this.equal.set(r.key, r.values[0]!)
      this.requiredCount++
      return
    }
    const rule = this.ruleFor(r.key)
    const wasRequired = rule.required
    switch (r.operator) {
      case 'in':
      case '=':
      case '==':
        rule.required = true
        ;(rule.allowed ??= []).push(r.values.length === 1 ? r.values[0]! : new Set(r.values))
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
    if (rule.required && !wasRequired) this.requiredCount++
  }

  /** The key's rule, made (from its one value in `equal`, when it had one) when it has none yet. */
  private ruleFor(key: string): KeyRule {
    let rule = this.rules.get(key)
    if (rule) return rule
    const value = this.equal.get(key)
    rule = value === undefined ? { required: false, forbidden: false } : { required: true, forbidden: false, allowed: [value] }
    // Counted while it was in `equal`; counted again below only when it becomes required.
    this.equal.delete(key)
    this.rules.set(key, rule)
    return rule
  }

  matches(labels: Record<string, string>): boolean {
    let count = 0
    for (const key in labels) {
      if (!Object.hasOwn(labels, key)) continue
      count++
      const value = labels[key]!
      const wanted = this.equal.get(key)
      if (wanted !== undefined) {
        if (value !== wanted) return false
        continue
      }
      const rule = this.rules.get(key)
      if (rule && !this.valueMatches(rule, value)) return false
    }
    if (this.requiredCount > count) return false
    for (const key of this.equal.keys()) if (!Object.hasOwn(labels, key)) return false
    for (const [key, rule] of this.rules) if (rule.required && !Object.hasOwn(labels, key)) return false
    return true
  }

  private valueMatches(rule: KeyRule, value: string): boolean {
    if (rule.forbidden || rule.excluded?.has(value)) return false
    if (rule.allowed) for (const allowed of rule.allowed) if (typeof allowed === 'string' ? allowed !== value : !allowed.has(value)) return false
    if (rule.above !== undefined || rule.below !== undefined) {
      const n = this.parseInt64(value)
      if (n === undefined) return false
      if (rule.above !== undefined && !(n > rule.above)) return false
      if (rule.below !== undefined && !(n < rule.below)) return false
    }
    return true
  }
}
