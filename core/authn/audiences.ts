/**
 * Audience lists compared as upstream's authenticator.Audiences does, but
 * through a set: a token's audiences and a TokenReview's are both the
 * caller's to choose, and two lists of tens of thousands compared pairwise
 * would hold the thread for seconds.
 */

/** The audiences of `ours` that are also in `theirs`, in `ours`' order (upstream's Intersect). */
export function intersectAudiences(ours: readonly string[], theirs: readonly string[]): string[] {
  const other = new Set(theirs)
  return ours.filter((a) => other.has(a))
}

/** Whether the two lists share an audience. */
export function shareAudience(ours: readonly string[], theirs: readonly string[]): boolean {
  const other = new Set(theirs)
  return ours.some((a) => other.has(a))
}
