/** Writing API objects and Status errors in the negotiated encoding. */
import { stringify as toYaml } from 'yaml'
import { JSON_TYPE, type OutputFormat, PROTOBUF_TYPE, YAML_TYPE } from './media-types.js'
import { encodeProtobuf } from './protobuf.js'
import type { StatusError } from './status-error.js'

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
  })
}

export function objectResponse(body: Record<string, unknown>, format: OutputFormat, status = 200): Response {
  switch (format.kind) {
    case 'yaml':
      return new Response(toYaml(body), { status, headers: { 'content-type': YAML_TYPE } })
    case 'protobuf':
      return new Response(encodeProtobuf(body), { status, headers: { 'content-type': PROTOBUF_TYPE } })
    default:
      return jsonResponse(body, status)
  }
}

export function statusResponse(err: StatusError): Response {
  return jsonResponse(err.toStatus(), err.code, err.headers)
}

export function textResponse(text: string, status = 200): Response {
  return new Response(text, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
  })
}
