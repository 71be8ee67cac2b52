/** CustomResourceDefinition validation: the causes a user sees for each kind of mistake, at upstream's paths. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../../../core/machinery/object.js'
import { crd, problemsOnCreate, SCHEMA, version } from './fixtures.js'

const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, " +
  "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
const NAME_RULE = 'must be spec.names.plural+"."+spec.group'

/** `%#v` of one internal version that sent only its name and flags (the schema moved to spec level). */
const goVersion = (name: string, storage: boolean) =>
  `apiextensions.CustomResourceDefinitionVersion{Name:"${name}", Served:true, Storage:${storage}, Deprecated:false, ` +
  'DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), ' +
  'Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), ' +
  'SelectableFields:[]apiextensions.SelectableField(nil)}'

const withSchema = (openAPIV3Schema: Record<string, unknown>, fields: Record<string, unknown> = {}) =>
  crd({ versions: [version('v1', { schema: { openAPIV3Schema }, ...fields })] })

const cases: { name: string; crd: KubeObject; causes: string[] }[] = [
  { name: 'a valid CRD', crd: crd(), causes: [] },
  {
    name: 'a name other than plural.group',
    crd: crd({}, { name: 'crontab.stable.example.com' }),
    causes: [`metadata.name: Invalid value: "crontab.stable.example.com": ${NAME_RULE}`],
  },
  {
    name: 'a group without a dot',
    crd: crd({ group: 'example' }, { name: 'crontabs.example' }),
    causes: ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
  },
  {
    name: 'a group that is no DNS subdomain',
    crd: crd({ group: 'Stable.example.com' }, { name: 'crontabs.Stable.example.com' }),
    causes: [
      'spec.group: Invalid value: "Stable.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, ' +
        "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ],
  },
  {
    name: 'no group and no scope',
    crd: crd({ group: '', scope: '' }, { name: 'crontabs.' }),
    causes: ['spec.group: Required value', 'spec.scope: Required value'],
  },
  {
    name: 'an unknown scope',
    crd: crd({ scope: 'Global' }),
    causes: ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
  },
  {
    name: 'a version without a schema',
    crd: crd({ versions: [{ name: 'v1', served: true, storage: true }] }),
    causes: ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
  },
  {
    name: 'two storage versions',
    crd: crd({ versions: [version('v1'), version('v2')] }),
    causes: [
      `spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{${goVersion('v1', true)}, ${goVersion('v2', true)}}: ` +
        'must have exactly one version marked as storage version',
      'status.storedVersions: Invalid value: []string{"v1"}: must have the storage version v2',
    ],
  },
  {
    name: 'no versions at all',
    crd: crd({ versions: [] }),
    causes: [
      'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{}: must have exactly one version marked as storage version',
      'status.storedVersions: Invalid value: []string(nil): must have at least one stored version',
    ],
  },
  {
    name: 'a version named twice',
    crd: crd({ versions: [version('v1'), version('v1', { storage: false })] }),
    causes: [
      `spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{${goVersion('v1', true)}, ${goVersion('v1', false)}}: ` +
        'must contain unique version names',
    ],
  },
  {
    name: 'a version name that is no DNS-1035 label (reported again as the internal spec.version)',
    crd: crd({ versions: [version('V1')] }),
    causes: [`spec.versions[0].name: Invalid value: "V1": ${DNS1035}`, `spec.version: Invalid value: "V1": ${DNS1035}`],
  },
  {
    name: 'no names',
    crd: crd({ names: {} }, { name: '.stable.example.com' }),
    causes: [
      'spec.names.plural: Required value',
      'spec.names.singular: Required value',
      'spec.names.kind: Required value',
      'spec.names.listKind: Required value',
    ],
  },
  {
    name: 'names that are no DNS-1035 labels',
    crd: crd(
      { names: { plural: 'Crontabs', singular: 'cron-tab', kind: 'Cron_Tab', listKind: 'Cron_Tab', shortNames: ['c t'], categories: ['All'] } },
      { name: 'Crontabs.stable.example.com' },
    ),
    causes: [
      `spec.names.plural: Invalid value: "Crontabs": ${DNS1035}`,
      `spec.names.kind: Invalid value: "Cron_Tab": may have mixed case, but should otherwise match: ${DNS1035}`,
      `spec.names.listKind: Invalid value: "Cron_Tab": may have mixed case, but should otherwise match: ${DNS1035}`,
      `spec.names.shortNames[0]: Invalid value: "c t": ${DNS1035}`,
      'spec.names.listKind: Invalid value: "Cron_Tab": kind and listKind may not be the same',
      `spec.names.categories[0]: Invalid value: "All": ${DNS1035}`,
    ],
  },
  {
    name: 'a schema that is not structural (reported at spec level when every version has it)',
    crd: withSchema({ type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } }),
    causes: ['spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields'],
  },
  {
    name: 'a schema of one version of two that is not structural',
    crd: crd({ versions: [version('v1'), version('v2', { storage: false, schema: { openAPIV3Schema: { type: 'object', properties: { spec: {} } } } })] }),
    causes: ['spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields'],
  },
  {
    name: 'a CEL rule that does not compile',
    crd: withSchema({ ...SCHEMA, 'x-kubernetes-validations': [{ rule: 'self.nope == 1' }] }),
    causes: [
      'spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.nope == 1", ' +
        'Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: ' +
        "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^",
    ],
  },
  {
    name: 'a schema root other than an object with the status subresource',
    crd: withSchema({ type: 'array', items: { type: 'string' } }, { subresources: { status: {} } }),
    causes: [
      'spec.validation.openAPIV3Schema.type: Invalid value: "array": only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
      'spec.validation.openAPIV3Schema.type: Invalid value: "array": must be object at the root',
    ],
  },
  {
    name: 'a schema root with an enum with the status subresource',
    crd: withSchema({ ...SCHEMA, enum: [{}] }, { subresources: { status: {} } }),
    causes: [
      'spec.validation.openAPIV3Schema: Invalid value: apiextensions.JSONSchemaProps{...}: only [Description Type Format Title Maximum ' +
        'ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items ' +
        'Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled',
    ],
  },
  {
    name: 'scale paths outside .spec and .status',
    crd: crd({
      versions: [
        version('v1', {
          subresources: { scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: '.spec.replicas', labelSelectorPath: '.metadata.labels' } },
        }),
      ],
    }),
    causes: [
      'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
      'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status',
      'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status',
    ],
  },
  {
    name: 'a scale subresource without paths, in one version of two',
    crd: crd({ versions: [version('v1', { subresources: { scale: {} } }), version('v2', { storage: false })] }),
    causes: [
      'spec.versions[0].subresources.scale.specReplicasPath: Required value',
      'spec.versions[0].subresources.scale.statusReplicasPath: Required value',
    ],
  },
  {
    name: 'printer columns without name, with unknown types and formats, and bad paths',
    crd: crd({
      versions: [version('v1', { additionalPrinterColumns: [{ name: '', type: 'text', format: 'uuid', jsonPath: 'spec.x' }, { name: 'A', jsonPath: '' }] })],
    }),
    causes: [
      'spec.additionalPrinterColumns[0].name: Required value',
      'spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password',
      'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting with .',
      'spec.additionalPrinterColumns[1].type: Required value: must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[1].JSONPath: Required value',
    ],
  },
  {
    name: 'selectable fields that are not scalar fields of the schema, or twice',
    crd: crd({
      versions: [
        version('v1', {
          selectableFields: [
            { jsonPath: '.spec.color' },
            { jsonPath: '.spec.tags' },
            { jsonPath: '.spec.nope' },
            { jsonPath: '.spec.color' },
            { jsonPath: 'spec' },
            { jsonPath: '.spec[0]' },
            { jsonPath: '' },
          ],
        }),
      ],
    }),
    causes: [
      'spec.selectableFields[1].jsonPath: Invalid value: ".spec.tags": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      'spec.selectableFields[2].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
      'spec.selectableFields[3].jsonPath: Duplicate value: ".spec.color"',
      'spec.selectableFields[4].jsonPath: Invalid value: "spec": is an invalid path: expected [ or . but got: spec',
      'spec.selectableFields[5].jsonPath: Invalid value: ".spec[0]": is an invalid path: array notation is not allowed',
      'spec.selectableFields[6].jsonPath: Required value',
    ],
  },
  {
    name: 'more than eight selectable fields',
    crd: withSchema(
      { type: 'object', properties: { spec: { type: 'object', properties: Object.fromEntries([...'abcdefghi'].map((f) => [f, { type: 'string' }])) } } },
      { selectableFields: [...'abcdefghi'].map((f) => ({ jsonPath: `.spec.${f}` })) },
    ),
    causes: ['spec.selectableFields: Too many: 9: must have at most 8 items'],
  },
  {
    name: 'a deprecation warning on a version that is not deprecated',
    crd: crd({ versions: [version('v1', { deprecationWarning: 'going away' })] }),
    causes: ['spec.versions[0].deprecationWarning: Invalid value: "going away": can only be set for deprecated versions'],
  },
  {
    name: 'webhook conversion without a webhook',
    crd: crd({ conversion: { strategy: 'Webhook' } }),
    causes: [
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Required value',
    ],
  },
  {
    name: 'webhook conversion to a plain http URL with a query, speaking no known review version',
    crd: crd({ conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: 'http://conv.example.com/x?y=1' }, conversionReviewVersions: ['v2'] } } }),
    causes: [
      `spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'spec.conversion.webhookClientConfig.url: Invalid value: "y=1": query parameters are not permitted in the URL',
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    ],
  },
  {
    name: 'webhook conversion with both a URL and a service',
    crd: crd({
      conversion: {
        strategy: 'Webhook',
        webhook: { clientConfig: { url: 'https://conv.example.com', service: { namespace: 'ns', name: 'conv' } }, conversionReviewVersions: ['v1', 'v1'] },
      },
    }),
    causes: [
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v1": duplicate version',
    ],
  },
  {
    name: 'a webhook with the None strategy',
    crd: crd({ conversion: { strategy: 'None', webhook: { clientConfig: { url: 'https://conv.example.com' }, conversionReviewVersions: ['v1'] } } }),
    causes: [
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ],
  },
  {
    name: 'an unknown conversion strategy',
    crd: crd({ conversion: { strategy: 'Magic' } }),
    causes: ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"'],
  },
  {
    name: 'preserveUnknownFields, with schema defaults and webhook conversion',
    crd: crd({
      preserveUnknownFields: true,
      versions: [version('v1', { schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', default: {} } } } } })],
      conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://conv.example.com' }, conversionReviewVersions: ['v1'] } },
    }),
    causes: [
      'spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema',
      'spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true',
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ],
  },
  {
    name: 'a protected group without the approval annotation',
    crd: crd({ group: 'stable.k8s.io' }, { name: 'crontabs.stable.k8s.io' }),
    causes: [
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation ' +
        '"api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ],
  },
  {
    name: 'a protected group with an approval that is neither a URL nor unapproved',
    crd: crd({ group: 'stable.k8s.io' }, { name: 'crontabs.stable.k8s.io', annotations: { 'api-approved.kubernetes.io': 'yes' } }),
    causes: [
      'metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes": protected groups must have approval annotation ' +
        '"api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111',
    ],
  },
  {
    name: 'a protected group approved by a URL',
    crd: crd({ group: 'stable.k8s.io' }, { name: 'crontabs.stable.k8s.io', annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/1' } }),
    causes: [],
  },
  {
    name: 'a protected group deliberately unapproved',
    crd: crd({ group: 'stable.k8s.io' }, { name: 'crontabs.stable.k8s.io', annotations: { 'api-approved.kubernetes.io': 'unapproved, testing only' } }),
    causes: [],
  },
  {
    name: 'two versions with their own schemas, columns and a shared status subresource',
    crd: crd({
      versions: [
        version('v1', { subresources: { status: {} }, additionalPrinterColumns: [{ name: 'Image', type: 'string', jsonPath: '.spec.image' }] }),
        version('v2', { storage: false, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }),
      ],
    }),
    causes: [],
  },
]

describe('CustomResourceDefinition validation', () => {
  for (const c of cases) {
    it(`${c.causes.length ? 'refuses' : 'accepts'} ${c.name}`, () => {
      assert.deepEqual(problemsOnCreate(c.crd), c.causes)
    })
  }
})
