/**
 * The object every storage figure reads and writes: a ConfigMap of about
 * 1 KB as JSON, the size of a small application's settings, with labels, an
 * annotation and a multi-line file among its data.
 */
import type { KubeObject } from 'kube-apiserver-ts'

const SETTINGS_FILE = Array.from({ length: 18 }, (_, i) => `option.${String(i).padStart(2, '0')} = value-${'v'.repeat(20)}-${i}`).join('\n')

function configMapFields(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      labels: { 'app.kubernetes.io/name': 'bench', 'app.kubernetes.io/component': 'settings' },
      annotations: { 'bench.example.com/owner': 'storage-benchmarks' },
    },
    data: { 'settings.conf': SETTINGS_FILE, 'log.level': 'info', 'feature.flags': 'alpha,beta,gamma' },
  }
}

/** The request body a client sends to create `name`. */
export function configMapBody(name: string): string {
  return JSON.stringify(configMapFields(name))
}

/** The object as the registry hands it to storage: namespace, uid and creation time filled in. */
export function storedConfigMap(namespace: string, name: string): KubeObject {
  const obj = configMapFields(name)
  obj.metadata = { ...obj.metadata, namespace, uid: crypto.randomUUID(), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }
  return obj
}
