/**
 * AlwaysPullImages: every container of a pod pulls its image on each start
 * (`imagePullPolicy: Always`), so that a pod cannot use an image another
 * pod's credentials pulled onto the node. The validating half refuses a pod
 * a later mutating plugin set otherwise (500, as upstream answers its aggregate of refusals); an update that brings no new image
 * is left alone, as upstream does.
 */
import { notSupported, FieldPath, errorText } from '../../machinery/field.js'
import type { AdmissionAttributes } from '../attributes.js'
import type { AdmissionPlugin } from '../chain.js'
import { bareError, containersWithPath, on, podSpecOf, refuse, specOf } from './pods.js'

const images = (obj: unknown): Set<string> =>
  new Set(containersWithPath(specOf(obj)).map(({ container }) => String(container['image'] ?? '')))

/** Whether the update's images are all ones the stored pod already had. */
function noNewImages(a: AdmissionAttributes): boolean {
  if (a.operation !== 'UPDATE') return false
  const old = images(a.oldObject)
  return [...images(a.object)].every((image) => old.has(image))
}

const specFor = (a: AdmissionAttributes) => (noNewImages(a) ? undefined : podSpecOf(a, ['ephemeralcontainers']))

export const alwaysPullImages = {
  name: 'AlwaysPullImages',
  handles: on('CREATE', 'UPDATE'),
  admit(a: AdmissionAttributes) {
    const spec = specFor(a)
    if (spec) for (const { container } of containersWithPath(spec)) container['imagePullPolicy'] = 'Always'
  },
  validate(a: AdmissionAttributes) {
    const spec = specFor(a)
    if (!spec) return
    const problems = containersWithPath(spec)
      .filter(({ container }) => container['imagePullPolicy'] !== 'Always')
      .map(({ container, path }) => refuse(a, errorText(notSupported(FieldPath.root(`${path}.imagePullPolicy`), container['imagePullPolicy'] ?? '', ['Always']))).message)
    // Upstream returns its per-container Forbidden errors as one aggregate, which its handlers answer with 500.
    if (problems.length === 1) throw bareError(problems[0] ?? '')
    if (problems.length > 1) throw bareError(`[${problems.join(', ')}]`)
  },
} satisfies AdmissionPlugin
