/**
 * apiextensions.k8s.io/v1: CustomResourceDefinitions. The entry only:
 * serving the custom resources they define is their own work. Upstream
 * keeps them under their group in storage.
 */
import type { ResourceEntry } from '../catalogue.js'
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
  subresources: [statusSubresource('CustomResourceDefinition')],
  storagePath: 'apiextensions.k8s.io/customresourcedefinitions',
})
