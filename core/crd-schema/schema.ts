/**
 * The OpenAPI v3 schema a CustomResourceDefinition version carries
 * (apiextensions.k8s.io/v1 JSONSchemaProps), as clients send it: plain JSON.
 * Only the fields upstream gives a meaning are typed; the keywords it refuses
 * (`$ref`, `definitions`, `patternProperties`, ...) are typed too, so the
 * structural checks can name them.
 */
import { isPlainObject } from '../machinery/object.js'

export interface ValidationRule {
  rule: string
  message?: string
  messageExpression?: string
  reason?: string
  fieldPath?: string
  optionalOldSelf?: boolean
}

export interface JSONSchemaProps {
  id?: string
  $schema?: string
  $ref?: string
  description?: string
  type?: string
  format?: string
  title?: string
  default?: unknown
  maximum?: number
  exclusiveMaximum?: boolean
  minimum?: number
  exclusiveMinimum?: boolean
  maxLength?: number
  minLength?: number
  pattern?: string
  maxItems?: number
  minItems?: number
  uniqueItems?: boolean
  multipleOf?: number
  enum?: unknown[]
  maxProperties?: number
  minProperties?: number
  required?: string[]
  /** A single schema; an array of schemas is refused by the structural checks. */
  items?: JSONSchemaProps | JSONSchemaProps[]
  allOf?: JSONSchemaProps[]
  oneOf?: JSONSchemaProps[]
  anyOf?: JSONSchemaProps[]
  not?: JSONSchemaProps
  properties?: Record<string, JSONSchemaProps>
  additionalProperties?: JSONSchemaProps | boolean
  patternProperties?: Record<string, JSONSchemaProps>
  dependencies?: Record<string, JSONSchemaProps | string[]>
  additionalItems?: JSONSchemaProps | boolean
  definitions?: Record<string, JSONSchemaProps>
  externalDocs?: { description?: string; url?: string }
  example?: unknown
  nullable?: boolean
  'x-kubernetes-preserve-unknown-fields'?: boolean
  'x-kubernetes-embedded-resource'?: boolean
  'x-kubernetes-int-or-string'?: boolean
  'x-kubernetes-list-map-keys'?: string[]
  'x-kubernetes-list-type'?: string
  'x-kubernetes-map-type'?: string
  'x-kubernetes-validations'?: ValidationRule[]
}

/** The single schema of `items`, or undefined when absent or given as an array. */
export function itemsSchema(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  const items = schema.items
  return isPlainObject(items) ? (items as JSONSchemaProps) : undefined
}

/** The schema of `additionalProperties` when it is one (not a boolean). */
export function additionalPropertiesSchema(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  const additional = schema.additionalProperties
  return isPlainObject(additional) ? (additional as JSONSchemaProps) : undefined
}

export const preservesUnknownFields = (schema: JSONSchemaProps): boolean =>
  schema['x-kubernetes-preserve-unknown-fields'] === true

export const isEmbeddedResource = (schema: JSONSchemaProps): boolean => schema['x-kubernetes-embedded-resource'] === true

export const isIntOrString = (schema: JSONSchemaProps): boolean => schema['x-kubernetes-int-or-string'] === true

/** The fields every resource root (and embedded resource) carries whatever its schema says. */
export const RESOURCE_META_FIELDS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata'])
