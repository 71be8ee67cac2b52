/**
 * The rules of a VolumeAttachment (upstream's ValidateVolumeAttachment, its
 * v1 additions and its update rule): an attacher named as a CSI driver is,
 * exactly one source (a persistent volume's name, or an inline volume
 * spec), a node name, and a status whose metadata and error messages stay
 * small. The spec is fixed once created; the status is the attacher's.
 */
import { utf8Length } from '../../machinery/utf8-length.js'
import { type FieldError, fieldPath, type FieldPath, forbiddenField, invalid, isSet, required, tooLong } from '../../machinery/field.js'
import { GoLiteral, goPointerText, goQuote } from '../../machinery/go-format.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'
import type { KubeObject } from '../../machinery/object.js'
import { semanticEqual } from '../apps/selector.js'
import { record, text } from '../columns/values.js'
import { validateCSIDriverName } from './csi-driver-name.js'
import { appendAll } from '../../machinery/append-all.js'

const MAX_ATTACHMENT_METADATA_BYTES = 256 * 1024
const MAX_ERROR_MESSAGE_BYTES = 1024

const SOURCE_RULE = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'


/** A new attachment starts unattached: the status is the attacher's to write. */
export function prepareVolumeAttachmentForCreate(va: KubeObject): void {
  va['status'] = { attached: false }
}

function validateSource(source: Record<string, unknown>, path: FieldPath): FieldError[] {
  const pvName = source['persistentVolumeName']
  const inline = source['inlineVolumeSpec']
  if (!isSet(pvName) && !isSet(inline)) return [required(path, SOURCE_RULE)]
  if (isSet(pvName) && isSet(inline)) return [forbiddenField(path, SOURCE_RULE)]
  if (isSet(pvName) && text(pvName) === '') return [required(path.child('persistentVolumeName'), 'must specify non empty persistentVolumeName')]
  // An inline spec would be checked as a PersistentVolume's spec is; this server has no such check yet.
  return []
}

function validateVolumeError(error: unknown, path: FieldPath): FieldError[] {
  if (!isSet(error)) return []
  // Upstream reports the metadata limit here, not the message's own.
  return utf8Length(text(record(error)['message'])) > MAX_ERROR_MESSAGE_BYTES ? [tooLong(path.child('message'), MAX_ATTACHMENT_METADATA_BYTES)] : []
}

function validateStatus(status: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  let size = 0
  for (const [k, v] of Object.entries(record(status['attachmentMetadata']))) size += utf8Length(k) + utf8Length(text(v))
  if (size > MAX_ATTACHMENT_METADATA_BYTES) errs.push(tooLong(path.child('attachmentMetadata'), MAX_ATTACHMENT_METADATA_BYTES))
  appendAll(errs, validateVolumeError(status['attachError'], path.child('attachError')))
  appendAll(errs, validateVolumeError(status['detachError'], path.child('detachError')))
  return errs
}

/** What every write of an attachment must satisfy (upstream's ValidateVolumeAttachment). */
function validateAttachment(va: KubeObject): FieldError[] {
  const spec = record(va['spec'])
  const path = fieldPath('spec')
  const errs: FieldError[] = []
  if (text(spec['attacher']) === '') errs.push(required(path.child('attacher')))
  appendAll(errs, validateSource(record(spec['source']), path.child('source')))
  const nodeName = text(spec['nodeName'])
  for (const msg of isDNS1123Subdomain(nodeName)) errs.push(invalid(path.child('nodeName'), nodeName, msg))
  appendAll(errs, validateStatus(record(va['status']), fieldPath('status')))
  return errs
}

/** The checks v1 added for new attachments only: the attacher's name, and the volume's. */
function validateNewV1Attachment(va: KubeObject): FieldError[] {
  const spec = record(va['spec'])
  const errs = validateCSIDriverName(text(spec['attacher']), fieldPath('spec.attacher'))
  const pvName = record(spec['source'])['persistentVolumeName']
  if (isSet(pvName)) {
    const name = text(pvName)
    for (const msg of isDNS1123Subdomain(name)) errs.push(invalid(fieldPath('spec.source.persistentVolumeName'), name, msg))
  }
  return errs
}

export function validateVolumeAttachment(va: KubeObject): FieldError[] {
  return [...validateAttachment(va), ...validateNewV1Attachment(va)]
}

/** `%#v` of a storage.VolumeAttachmentSpec, the value upstream shows for a changed spec. */
function goSpec(spec: Record<string, unknown>): GoLiteral {
  const source = record(spec['source'])
  const pvName = goPointerText('string', source['persistentVolumeName'], (v) => goQuote(text(v)))
  const inline = goPointerText('core.PersistentVolumeSpec', source['inlineVolumeSpec'], () => '{...}')
  return new GoLiteral(
    `storage.VolumeAttachmentSpec{Attacher:${goQuote(text(spec['attacher']))}, Source:storage.VolumeAttachmentSource{PersistentVolumeName:${pvName}, InlineVolumeSpec:${inline}}, NodeName:${goQuote(text(spec['nodeName']))}}`,
  )
}

/**
 * Through the main endpoint and through status alike (upstream's status
 * strategy keeps the main one's check). Upstream's update rule repeats the
 * common checks after its strategy ran them: each error comes twice in the
 * causes, once in the message.
 */
export function validateVolumeAttachmentUpdate(va: KubeObject, old: KubeObject): FieldError[] {
  const errs = [...validateAttachment(va), ...validateAttachment(va)]
  if (!semanticEqual(va['spec'], old['spec'])) errs.push(invalid(fieldPath('spec'), goSpec(record(va['spec'])), 'field is immutable'))
  return errs
}
