/**
 * The Node authorizer's graph (upstream: plugin/pkg/auth/authorizer/node/graph.go):
 * vertices are objects (`pod`, `secret`, `node`, ...), an edge points from
 * what is used to its user and on to a node (`secret -> pod -> node`,
 * `secret -> pv -> pvc -> pod -> node`). A node may read an object when a
 * path leads from it to that node.
 *
 * Each edge belongs to the object that declared it (a pod declares its own
 * edges, a PV its own), so an update replaces that object's edges in one
 * step and a deletion removes them, whatever other objects say.
 */

export type VertexType = 'configmap' | 'node' | 'pod' | 'pv' | 'pvc' | 'resourceclaim' | 'secret' | 'serviceaccount' | 'volumeattachment'

export interface Vertex {
  type: VertexType
  namespace: string
  name: string
}

export interface Edge {
  from: Vertex
  to: Vertex
}

const keyOf = (v: Vertex): string => `${v.type}/${v.namespace}/${v.name}`

export class NodeGraph {
  /** Outgoing edges: vertex key -> (target key -> how many owners declare that edge). */
  private readonly out = new Map<string, Map<string, number>>()
  /** What each owner (`pod/ns/name`, `pv//name`, ...) declared, to take back on update or deletion. */
  private readonly declared = new Map<string, [string, string][]>()

  /** Replaces every edge `owner` declared with `edges` (none: the owner is gone). */
  setEdges(owner: Vertex, edges: readonly Edge[]): void {
    const ownerKey = keyOf(owner)
    for (const [from, to] of this.declared.get(ownerKey) ?? []) this.unlink(from, to)
    const keys = edges.map((e): [string, string] => [keyOf(e.from), keyOf(e.to)])
    for (const [from, to] of keys) this.link(from, to)
    if (keys.length) this.declared.set(ownerKey, keys)
    else this.declared.delete(ownerKey)
  }

  /** Whether a path leads from `start` to the node `nodeName`; paths do not run through other nodes. */
  reaches(start: Vertex, nodeName: string): boolean {
    const target = keyOf({ type: 'node', namespace: '', name: nodeName })
    const seen = new Set<string>([keyOf(start)])
    const pending = [keyOf(start)]
    for (let key = pending.pop(); key !== undefined; key = pending.pop()) {
      for (const next of this.out.get(key)?.keys() ?? []) {
        if (next === target) return true
        if (seen.has(next) || next.startsWith('node/')) continue
        seen.add(next)
        pending.push(next)
      }
    }
    return false
  }

  private link(from: string, to: string): void {
    let targets = this.out.get(from)
    if (!targets) this.out.set(from, (targets = new Map()))
    targets.set(to, (targets.get(to) ?? 0) + 1)
  }

  private unlink(from: string, to: string): void {
    const targets = this.out.get(from)
    const count = targets?.get(to) ?? 0
    if (!targets || count === 0) return
    if (count > 1) targets.set(to, count - 1)
    else {
      targets.delete(to)
      if (targets.size === 0) this.out.delete(from)
    }
  }
}
