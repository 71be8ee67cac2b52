/**
 * Upstream's refusal of a field label by the kinds that convert their own
 * labels (pods, nodes, replication controllers, events, namespaces,
 * secrets, certificate signing requests, jobs in their own words, custom
 * resources); the other kinds use the default conversion's words, which the
 * registry supplies.
 */
export const fieldLabelNotSupported = (label: string): string => `field label not supported: ${label}`
