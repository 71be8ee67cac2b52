/**
 * Kubernetes protobuf bodies (`application/vnd.kubernetes.protobuf`), decoded
 * and encoded generically from the type table. kubectl's typed commands
 * (`create namespace|configmap|secret|serviceaccount`, `auth can-i`,
 * `auth whoami`) send only this encoding (kubectl-wire.md 1.4), so the server
 * must read it; encoding serves clients that accept nothing else.
 *
 * Envelope: "k8s\0" then runtime.Unknown {1: typeMeta {1: apiVersion, 2: kind},
 * 2: raw (the object's own message), 3: contentEncoding, 4: contentType}.
 *
 * This is the public entry; the codec lives in protobuf/: wire.ts (varints,
 * length-delimited fields, Reader and Writer), decode.ts, encode.ts,
 * scalars.ts (JSON forms of bytes, times and durations) and types.ts (what
 * the codec asks of the type table).
 */
export { decodeMessageOf, decodeProtobuf, decodeProtobufInSteps } from './protobuf/decode.js'
export { encodeMessageOf, encodeProtobuf, encodeProtobufInSteps } from './protobuf/encode.js'
export { PROTOBUF_MAGIC } from './protobuf/wire.js'
