/**
 * The structure of an AuthenticationConfiguration (upstream's
 * apiserver.config.k8s.io types): fields absent from the file hold Go's zero
 * values, so the rules report a missing field in upstream's words; unknown
 * fields are refused.
 */
import { z } from 'zod'
import { goBool, goList, goPointer, goString, goStruct } from './fields.js'

const prefixedClaimOrExpression = z.lazy(() => goStruct({ claim: goString, prefix: goPointer(z.string()), expression: goString }))

const issuer = z.lazy(() => goStruct({
  url: goString,
  discoveryURL: goPointer(z.string()),
  certificateAuthority: goString,
  audiences: goList(goString),
  audienceMatchPolicy: goString,
  egressSelectorType: goString,
}))

const claimValidationRule = z.lazy(() => goStruct({ claim: goString, requiredValue: goString, expression: goString, message: goString }))

const jwtAuthenticator = z.lazy(() => goStruct({
  issuer,
  claimValidationRules: goList(claimValidationRule),
  claimMappings: goStruct({
    username: prefixedClaimOrExpression,
    groups: prefixedClaimOrExpression,
    uid: goStruct({ claim: goString, expression: goString }),
    extra: goList(goStruct({ key: goString, valueExpression: goString })),
  }),
  userValidationRules: goList(goStruct({ expression: goString, message: goString })),
}))

const anonymousAuthConfig = z.lazy(() => goStruct({ enabled: goBool, conditions: goList(goStruct({ path: goString })) }))

export const authenticationConfigurationSchema = z.lazy(() => z.strictObject({
  jwt: goList(jwtAuthenticator),
  anonymous: goPointer(anonymousAuthConfig),
}))

export type AuthenticationConfiguration = z.output<typeof authenticationConfigurationSchema>
export type JWTAuthenticator = z.output<typeof jwtAuthenticator>
export type IssuerConfig = z.output<typeof issuer>
export type ClaimValidationRule = z.output<typeof claimValidationRule>
export type PrefixedClaimOrExpression = z.output<typeof prefixedClaimOrExpression>
export type AnonymousAuthConfig = z.output<typeof anonymousAuthConfig>
