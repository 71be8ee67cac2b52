/**
 * A boolean query parameter as upstream's parameter codec reads one: absent
 * is false; present, it is true unless it says `0` or `false` in any case
 * (`?force` and `?force=yes` are true).
 */
export function queryBool(params: URLSearchParams, name: string): boolean {
  const raw = params.get(name)
  return raw !== null && raw !== '0' && raw.toLowerCase() !== 'false'
}
