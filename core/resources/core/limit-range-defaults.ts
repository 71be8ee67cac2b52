/** The defaults of a LimitRange (upstream's SetDefaults_LimitRangeItem). */
import { isPlainObject, type KubeObject } from '../../machinery/object.js'

/** A Container item's default limit comes from max, its default request from default, else from min. */
export function defaultLimitRangeItems(limitRange: KubeObject): void {
  const spec = isPlainObject(limitRange['spec']) ? limitRange['spec'] : {}
  const items = Array.isArray(spec['limits']) ? spec['limits'].filter(isPlainObject) : []
  for (const item of items) {
    if (item['type'] !== 'Container') continue
    const fill = (field: string, from: unknown): void => {
      const target = isPlainObject(item[field]) ? item[field] : {}
      if (isPlainObject(from)) for (const [k, v] of Object.entries(from)) if (target[k] === undefined) target[k] = v
      if (Object.keys(target).length) item[field] = target
    }
    fill('default', item['max'])
    fill('defaultRequest', item['default'])
    fill('defaultRequest', item['min'])
  }
}
