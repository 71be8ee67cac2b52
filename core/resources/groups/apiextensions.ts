/**
 * apiextensions.k8s.io/v1: CustomResourceDefinitions; their rules live in
 * ../apiextensions/. Serving the custom resources they define is their own
 * work. Upstream keeps them under their group in storage.
 */
import type { ResourceEntry } from '../catalogue.js'
import { customResourceDefinitionStrategy } from '../apiextensions/strategy.js'
import { validateCrdStatusUpdate } from '../apiextensions/validation.js'
import { defineResource, statusSubresource } from '../define.js'

export const customResourceDefinitions: ResourceEntry = defineResource({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  tracksGeneration: true,
  resource: 'customresourcedefinitions',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  subresources: [{ ...statusSubresource('CustomResourceDefinition'), validateUpdate: validateCrdStatusUpdate }],
  storagePath: 'apiextensions.k8s.io/customresourcedefinitions',
  strategy: customResourceDefinitionStrategy,
})
