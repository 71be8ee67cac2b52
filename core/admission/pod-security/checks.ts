/**
 * The Pod Security Standards' checks (upstream's
 * staging/src/k8s.io/pod-security-admission/policy), one per control, each
 * with the level it belongs to, the version it takes effect from, and
 * upstream's reason and detail texts.
 */
import {
  ALLOWED,
  type Check,
  containersOf,
  containersPhrase,
  forbid,
  isWindowsPod,
  joinQuote,
  nameOf,
  obj,
  pluralize,
  securityContextOf,
  sortedUnique,
} from './check-helpers.js'

const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
])

/** Safe sysctls, by the version that allowed them. */
const SAFE_SYSCTLS: [number, string[]][] = [
  [0, ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start']],
  [27, ['net.ipv4.ip_local_reserved_ports']],
  [29, ['net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']],
  [32, ['net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']],
]

const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t'])
/** The SELinux type allowed from 1.31 on. */
const SELINUX_TYPE_SINCE_1_31 = 'container_engine_t'
const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/'
const RESTRICTED_OK_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']
const VOLUME_SOURCES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder',
  'cephfs', 'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos',
]

const volumesOf = (spec: Record<string, unknown>) => (Array.isArray(spec['volumes']) ? spec['volumes'].map(obj) : [])

/** `pod` and/or `containers "a"`, joined with "and", for checks that the pod and its containers can both fail. */
function setters(podBad: boolean, badContainers: string[]): string {
  return [...(podBad ? ['pod'] : []), ...(badContainers.length ? [containersPhrase(badContainers)] : [])].join(' and ')
}

export const CHECKS: readonly Check[] = [
  // ---- baseline
  {
    id: 'appArmorProfile',
    level: 'baseline',
    since: 0,
    run({ metadata, spec }) {
      const values = new Set<string>()
      const unconfined = (sc: Record<string, unknown> | undefined): boolean => {
        const type = sc?.['appArmorProfile'] === undefined ? undefined : obj(sc['appArmorProfile'])['type']
        if (type === undefined || type === 'RuntimeDefault' || type === 'Localhost') return false
        values.add(String(type))
        return true
      }
      const podBad = unconfined(securityContextOf(spec))
      const bad = containersOf(spec).filter((c) => unconfined(securityContextOf(c))).map(nameOf)
      const annotations = Object.entries(metadata.annotations ?? {})
        .filter(([key, value]) => key.startsWith(APPARMOR_ANNOTATION_PREFIX) && value !== '' && value !== 'runtime/default' && !value.startsWith('localhost/'))
        .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
      for (const a of annotations) values.add(a)
      if (!values.size) return ALLOWED
      const who = [setters(podBad, bad), ...(annotations.length ? ['annotations'] : [])].filter(Boolean).join(' and ')
      return forbid(
        pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.size),
        `${who} must not set AppArmor profile type to ${joinQuote(sortedUnique(values))}`,
      )
    },
  },
  {
    id: 'capabilities_baseline',
    level: 'baseline',
    since: 0,
    run({ spec }) {
      const badContainers: string[] = []
      const badCaps = new Set<string>()
      for (const c of containersOf(spec)) {
        const added = obj(securityContextOf(c)?.['capabilities'])['add']
        const extra = (Array.isArray(added) ? added.map(String) : []).filter((cap) => !BASELINE_CAPABILITIES.has(cap))
        if (extra.length) badContainers.push(nameOf(c))
        for (const cap of extra) badCaps.add(cap)
      }
      if (!badContainers.length) return ALLOWED
      return forbid('non-default capabilities', `${containersPhrase(badContainers)} must not include ${joinQuote(sortedUnique(badCaps))} in securityContext.capabilities.add`)
    },
  },
  {
    id: 'hostNamespaces',
    level: 'baseline',
    since: 0,
    run({ spec }) {
      const set = ['hostNetwork', 'hostPID', 'hostIPC'].filter((f) => spec[f] === true).map((f) => `${f}=true`)
      return set.length ? forbid('host namespaces', set.join(', ')) : ALLOWED
    },
  },
  {
    id: 'hostPathVolumes',
    level: 'baseline',
    since: 0,
    run({ spec }) {
      const names = volumesOf(spec).filter((v) => v['hostPath'] !== undefined).map((v) => String(v['name'] ?? ''))
      return names.length ? forbid('hostPath volumes', `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}`) : ALLOWED
    },
  },
  {
    id: 'hostPorts',
    level: 'baseline',
    since: 0,
    run({ spec }) {
      const containers = new Set<string>()
      const ports = new Set<string>()
      for (const c of containersOf(spec))
        for (const p of Array.isArray(c['ports']) ? c['ports'].map(obj) : [])
          if (typeof p['hostPort'] === 'number' && p['hostPort'] !== 0) {
            containers.add(nameOf(c))
            ports.add(String(p['hostPort']))
          }
      if (!ports.size) return ALLOWED
      const names = sortedUnique(containers)
      const used = sortedUnique(ports)
      return forbid(
        'hostPort',
        `${containersPhrase(names)} ${pluralize('uses', 'use', names.length)} ${pluralize('hostPort', 'hostPorts', used.length)} ${used.join(', ')}`,
      )
    },
  },
  {
    id: 'privileged',
    level: 'baseline',
    since: 0,
    run({ spec }) {
      const bad = containersOf(spec).filter((c) => securityContextOf(c)?.['privileged'] === true).map(nameOf)
      return bad.length ? forbid('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`) : ALLOWED
    },
  },
  {
    id: 'procMount',
    level: 'baseline',
    since: 0,
    run({ spec }) {
      const bad: string[] = []
      const values = new Set<string>()
      for (const c of containersOf(spec)) {
        const mount = securityContextOf(c)?.['procMount']
        if (typeof mount === 'string' && mount !== '' && mount !== 'Default') {
          bad.push(nameOf(c))
          values.add(mount)
        }
      }
      return bad.length ? forbid('procMount', `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedUnique(values))}`) : ALLOWED
    },
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    since: 0,
    run({ spec }, minor) {
      const allowed = (type: string): boolean => SELINUX_TYPES.has(type) || (minor >= 31 && type === SELINUX_TYPE_SINCE_1_31)
      const badTypes = new Set<string>()
      let setUser = false
      let setRole = false
      const invalid = (sc: Record<string, unknown> | undefined): boolean => {
        if (!sc || sc['seLinuxOptions'] === undefined) return false
        const o = obj(sc['seLinuxOptions'])
        let bad = false
        const type = String(o['type'] ?? '')
        if (!allowed(type)) {
          bad = true
          badTypes.add(type)
        }
        if (o['user']) bad = setUser = true
        if (o['role']) bad = setRole = true
        return bad
      }
      const podBad = invalid(securityContextOf(spec))
      const bad = containersOf(spec).filter((c) => invalid(securityContextOf(c))).map(nameOf)
      if (!podBad && !bad.length) return ALLOWED
      const data: string[] = []
      // Upstream names the user and role only alongside a forbidden type.
      if (badTypes.size) {
        data.push(`${pluralize('type', 'types', badTypes.size)} ${joinQuote(sortedUnique(badTypes))}`)
        if (setUser) data.push('user may not be set')
        if (setRole) data.push('role may not be set')
      }
      return forbid('seLinuxOptions', `${setters(podBad, bad)} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`)
    },
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    since: 19,
    run({ spec }) {
      const unconfined = (sc: Record<string, unknown> | undefined): boolean => obj(sc?.['seccompProfile'])['type'] === 'Unconfined'
      const podBad = unconfined(securityContextOf(spec))
      const bad = containersOf(spec).filter((c) => unconfined(securityContextOf(c))).map(nameOf)
      if (!podBad && !bad.length) return ALLOWED
      return forbid('seccompProfile', `${setters(podBad, bad)} must not set securityContext.seccompProfile.type to "Unconfined"`)
    },
  },
  {
    id: 'sysctls',
    level: 'baseline',
    since: 0,
    run({ spec }, minor) {
      const safe = new Set(SAFE_SYSCTLS.filter(([since]) => minor >= since).flatMap(([, names]) => names))
      const sysctls = obj(securityContextOf(spec))['sysctls']
      const bad = (Array.isArray(sysctls) ? sysctls.map(obj) : []).map((s) => String(s['name'] ?? '')).filter((n) => !safe.has(n))
      return bad.length ? forbid('forbidden sysctls', bad.join(', ')) : ALLOWED
    },
  },
  {
    id: 'windowsHostProcess',
    level: 'baseline',
    since: 0,
    run({ spec }) {
      const hostProcess = (sc: Record<string, unknown> | undefined): boolean => obj(sc?.['windowsOptions'])['hostProcess'] === true
      const podBad = hostProcess(securityContextOf(spec))
      const bad = containersOf(spec).filter((c) => hostProcess(securityContextOf(c))).map(nameOf)
      if (!podBad && !bad.length) return ALLOWED
      return forbid('hostProcess', `${setters(podBad, bad)} must not set securityContext.windowsOptions.hostProcess=true`)
    },
  },
  // ---- restricted
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    since: 8,
    run({ spec }, minor) {
      if (isWindowsPod(spec, minor)) return ALLOWED
      const bad = containersOf(spec).filter((c) => securityContextOf(c)?.['allowPrivilegeEscalation'] !== false).map(nameOf)
      return bad.length ? forbid('allowPrivilegeEscalation != false', `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`) : ALLOWED
    },
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    since: 22,
    overrides: ['capabilities_baseline'],
    run({ spec }, minor) {
      if (isWindowsPod(spec, minor)) return ALLOWED
      const missingDrop: string[] = []
      const adding: string[] = []
      const caps = new Set<string>()
      for (const c of containersOf(spec)) {
        const capabilities = securityContextOf(c)?.['capabilities']
        if (capabilities === undefined) {
          missingDrop.push(nameOf(c))
          continue
        }
        const drop = obj(capabilities)['drop']
        if (!(Array.isArray(drop) && drop.includes('ALL'))) missingDrop.push(nameOf(c))
        const add = obj(capabilities)['add']
        const forbidden = (Array.isArray(add) ? add.map(String) : []).filter((cap) => cap !== 'NET_BIND_SERVICE')
        if (forbidden.length) adding.push(nameOf(c))
        for (const cap of forbidden) caps.add(cap)
      }
      const details = [
        ...(missingDrop.length ? [`${containersPhrase(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`] : []),
        ...(adding.length ? [`${containersPhrase(adding)} must not include ${joinQuote(sortedUnique(caps))} in securityContext.capabilities.add`] : []),
      ]
      return details.length ? forbid('unrestricted capabilities', details.join('; ')) : ALLOWED
    },
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    since: 0,
    overrides: ['hostPathVolumes'],
    run({ spec }) {
      const names: string[] = []
      const types = new Set<string>()
      for (const v of volumesOf(spec)) {
        if (RESTRICTED_OK_VOLUMES.some((k) => v[k] !== undefined)) continue
        names.push(String(v['name'] ?? ''))
        types.add(VOLUME_SOURCES.find((k) => v[k] !== undefined) ?? 'unknown')
      }
      if (!names.length) return ALLOWED
      const kinds = sortedUnique(types)
      return forbid(
        'restricted volume types',
        `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)} ${pluralize('uses', 'use', names.length)} ${pluralize('restricted volume type', 'restricted volume types', kinds.length)} ${joinQuote(kinds)}`,
      )
    },
  },
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    since: 0,
    run({ spec }) {
      const podValue = securityContextOf(spec)?.['runAsNonRoot']
      const explicit: string[] = []
      const implicit: string[] = []
      for (const c of containersOf(spec)) {
        const value = securityContextOf(c)?.['runAsNonRoot']
        if (value === false) explicit.push(nameOf(c))
        else if (value === undefined && podValue !== true) implicit.push(nameOf(c))
      }
      if (podValue === false || explicit.length)
        return forbid('runAsNonRoot != true', `${setters(podValue === false, explicit)} must not set securityContext.runAsNonRoot=false`)
      if (implicit.length) return forbid('runAsNonRoot != true', `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`)
      return ALLOWED
    },
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    since: 23,
    run({ spec }) {
      const root = (sc: Record<string, unknown> | undefined): boolean => sc?.['runAsUser'] === 0
      const podBad = root(securityContextOf(spec))
      const bad = containersOf(spec).filter((c) => root(securityContextOf(c))).map(nameOf)
      return podBad || bad.length ? forbid('runAsUser=0', `${setters(podBad, bad)} must not set runAsUser=0`) : ALLOWED
    },
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    since: 19,
    overrides: ['seccompProfile_baseline'],
    run({ spec }, minor) {
      if (isWindowsPod(spec, minor)) return ALLOWED
      const typeOf = (sc: Record<string, unknown> | undefined): unknown => (sc?.['seccompProfile'] === undefined ? undefined : obj(sc['seccompProfile'])['type'])
      const valid = (t: unknown): boolean => t === 'RuntimeDefault' || t === 'Localhost'
      const podType = typeOf(securityContextOf(spec))
      const podBad = podType !== undefined && !valid(podType)
      const values = new Set<string>(podBad ? [String(podType)] : [])
      const explicit: string[] = []
      const implicit: string[] = []
      for (const c of containersOf(spec)) {
        const t = typeOf(securityContextOf(c))
        if (t !== undefined && !valid(t)) {
          explicit.push(nameOf(c))
          values.add(String(t))
        } else if (t === undefined && !(podType !== undefined && valid(podType))) implicit.push(nameOf(c))
      }
      if (podBad || explicit.length)
        return forbid('seccompProfile', `${setters(podBad, explicit)} must not set securityContext.seccompProfile.type to ${joinQuote(sortedUnique(values))}`)
      if (implicit.length)
        return forbid('seccompProfile', `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`)
      return ALLOWED
    },
  },
]
