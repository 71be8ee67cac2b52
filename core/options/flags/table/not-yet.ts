/**
 * Why a pending flag is accepted but not yet in effect, worded once and
 * shared by the flags of one feature. When a feature lands, its flags flip
 * from `status: 'pending'` to `status: 'active'`.
 */
export const NOT_YET = {
  encryptionReload: 'the encryption configuration is read at start-up; reloading it is not implemented yet',
  auditWebhook: 'the audit webhook backend is not built yet; the log backend is',
  admission: 'admission plugins are not implemented yet',
  externalSigner: 'service account tokens are signed with the key files; an external signer is not supported yet',
  emulation: 'version emulation is not implemented; the server serves the APIs of its own version',
  featureGates: 'feature gates are checked but switch nothing yet',
  limits: 'connection throughput limits are not enforced yet',
  priorityAndFairness:
    'priority and fairness is not implemented yet: while it is on (the default) requests are not limited; --enable-priority-and-fairness=false enforces --max-requests-inflight and --max-mutating-requests-inflight',
  contentionProfiling: 'V8 has no lock-contention profile; the flag changes nothing',
  externalHost: 'generated URLs use the host the client asked for',
  metrics: 'the server exports no metrics yet',
  logging: 'logs are JSON lines from pino; klog-style logging options are not applied',
  tracing: 'tracing is not implemented yet',
  egress: 'outgoing connections are made directly; egress selection is not implemented',
  aggregation: 'API aggregation is not implemented yet',
  nodeAgent: 'the server does not connect to node agents yet',
  peers: 'running several servers side by side is not supported yet',
  workloads: 'pod-level policies are not applied yet',
  events: 'events are kept like other objects; their time to live is not applied yet',
  logsHandler: 'there is no /logs endpoint',
} as const
