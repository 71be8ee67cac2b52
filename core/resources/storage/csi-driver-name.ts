/**
 * The name a CSI driver goes by where another object refers to it (a
 * VolumeAttachment's attacher, a CSINode's drivers), as upstream's core
 * ValidateCSIDriverName checks it: required, at most 63 bytes, and a DNS
 * subdomain once lower-cased, so `CSI.Example.com` passes. The CSIDriver
 * object's own name is only a DNS subdomain (the generic name rule).
 */
import { utf8Length } from '../../machinery/utf8-length.js'
import { type FieldError, type FieldPath, invalid, required, tooLong } from '../../machinery/field.js'
import { isDNS1123Subdomain } from '../../machinery/names.js'

const CSI_DRIVER_NAME_MAX = 63

export function validateCSIDriverName(name: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = []
  if (name === '') errs.push(required(path))
  if (utf8Length(name) > CSI_DRIVER_NAME_MAX) errs.push(tooLong(path, CSI_DRIVER_NAME_MAX))
  for (const msg of isDNS1123Subdomain(name.toLowerCase())) errs.push(invalid(path, name, msg))
  return errs
}
