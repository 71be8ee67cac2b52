/**
 * Upstream's conformance specs against the daemon: starts the built daemon
 * on a free loopback port with its embedded store in a fresh directory (or
 * on etcd with `--etcd-servers=URL` after `--`), then runs Kubernetes' e2e
 * test binary against its admin kubeconfig and prints each spec's outcome.
 *
 *   npm run conformance -- [--e2e-binary PATH] [--workloads] [--focus REGEX] [--skip REGEX] [-- daemon flags]
 *
 * The binary is `e2e.test` from Kubernetes' source tree (`make
 * WHAT=test/e2e/e2e.test`; docs/conformance.md says how to build it), found
 * through --e2e-binary, then $E2E_TEST_BINARY, then the PATH.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..')
const DAEMON = join(ROOT, 'dist', 'runtimes', 'node', 'main.cjs')
/**
 * The conformance specs that need no pod to run (no node agent runs here): sig-api-machinery's, and the other sigs'
 * that exercise an API alone.
 */
const DEFAULT_FOCUS = String.raw`(?:${[
  String.raw`\[sig-api-machinery\]`,
  'Lease lease API',
  'Certificates API',
  'ServiceAccounts should run through the lifecycle',
  'Events API',
  String.raw`Ingress(?:Class)? API`,
  'Services should (?:find a service from listing all namespaces|provide secure master service|test the lifecycle of an Endpoint)',
  'ConfigMap should (?:fail to create|run through)',
  'PodTemplates',
  String.raw`RuntimeClass\s+should support RuntimeClasses API`,
].join('|')}).*\[Conformance\]`
const DEFAULT_SKIP =
  'AdmissionWebhook|Aggregator|CustomResourceConversionWebhook|Garbage collector should (delete|orphan|keep|not delete)|consumable|all pods are removed'

/**
 * `--workloads`: the conformance specs that need workloads to run, against
 * the daemon with its workload controllers and three simulated nodes:
 * sig-apps', and those of the garbage collector, pods and their init
 * containers, the kubelet's events, scheduling (PriorityClass's API among
 * them, whose suite wants ready nodes), LimitRange, endpoints and kubectl
 * that a simulated node can satisfy. Skipped are the sig-apps specs
 * that need what a simulated node does not do (docs/conformance.md): a
 * container that serves HTTP, an image that cannot be pulled, a readiness
 * probe broken by a command run in the container.
 */
const WORKLOADS = {
  focus: String.raw`(?:${[
    String.raw`\[sig-apps\]`,
    'Garbage collector',
    String.raw`\[k8s\.io\] Pods should (?:get a host IP|be updated|be submitted and removed|delete a collection|run through the lifecycle|allow activeDeadlineSeconds)`,
    'InitContainer',
    'Kubelet when scheduling a busybox command that always fails',
    'Events should be sent by kubelets and the scheduler',
    String.raw`SchedulerPredicates .*(?:NodeSelector|resource limits|0\.0\.0\.0 hostIP)`,
    'LimitRange',
    // An API's spec, but its suite's set-up wants ready nodes.
    'PriorityClass endpoints',
    'Service endpoints latency',
    'lifecycle of an Endpoint',
    String.raw`Kubectl client (?:Kubectl (?:api-versions|cluster-info|describe|diff|label|patch|replace|run pod|server-side dry-run)|Proxy server)`,
  ].join('|')}).*\[Conformance\]`,
  skip: 'serve a basic image|proportional scaling|rollback without unnecessary restarts|Burst scaling|predictable order|rolling updates and roll backs',
  daemonFlags: ['--controllers=*', '--simulated-nodes=3'],
}

function argument(args: string[], name: string): string | undefined {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      srv.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

async function startDaemon(dir: string, extra: string[]): Promise<{ child: ChildProcess; kubeconfig: string }> {
  if (!existsSync(DAEMON)) throw new Error(`${DAEMON} is missing: run npm run build first`)
  const port = await freePort()
  const child = spawn(process.execPath, [DAEMON, `--secure-port=${port}`, '--bind-address=127.0.0.1', `--cert-dir=${join(dir, 'pki')}`, `--data-dir=${join(dir, 'data')}`, ...extra], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const kubeconfig = join(dir, 'pki', 'admin.kubeconfig')
  for (let waited = 0; waited < 60_000; waited += 200) {
    if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`)
    if (existsSync(kubeconfig)) {
      try {
        if (execFileSync('kubectl', ['--kubeconfig', kubeconfig, 'get', '--raw', '/readyz'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString() === 'ok')
          return { child, kubeconfig }
      } catch {
        // not ready yet
      }
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  child.kill()
  throw new Error('the daemon was not ready within 60 s')
}

async function main(): Promise<number> {
  const all = process.argv.slice(2)
  const split = all.indexOf('--')
  const own = split >= 0 ? all.slice(0, split) : all
  const workloads = own.includes('--workloads')
  const daemonFlags = [...(workloads ? WORKLOADS.daemonFlags : []), ...(split >= 0 ? all.slice(split + 1) : [])]
  const binary = argument(own, '--e2e-binary') ?? process.env['E2E_TEST_BINARY'] ?? 'e2e.test'
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-conformance-'))
  const { child, kubeconfig } = await startDaemon(dir, daemonFlags)
  const log = join(dir, 'e2e.log')
  console.error(`daemon ready; running ${binary} (log: ${log})`)
  try {
    const e2e = spawn(
      'sh',
      [
        '-c',
        '"$0" "$@" > "$E2E_LOG" 2>&1',
        binary,
        `--kubeconfig=${kubeconfig}`,
        '--provider=skeleton',
        '--num-nodes=0',
        '--minStartupPods=0',
        '--system-pods-startup-timeout=10s',
        '--e2e-verify-service-account=false',
        `--ginkgo.focus=${argument(own, '--focus') ?? (workloads ? WORKLOADS.focus : DEFAULT_FOCUS)}`,
        `--ginkgo.skip=${argument(own, '--skip') ?? (workloads ? WORKLOADS.skip : DEFAULT_SKIP)}`,
        '--ginkgo.noColor',
        `--report-dir=${dir}`,
      ],
      { stdio: 'inherit', env: { ...process.env, E2E_LOG: log } },
    )
    await new Promise<void>((resolve) => e2e.on('exit', () => resolve()))
  } finally {
    child.kill('SIGTERM')
  }
  // Ginkgo's JSON progress lines name each spec's outcome.
  const outcomes = [...readFileSync(log, 'utf8').matchAll(/"msg":"((?:PASSED|FAILED) [^"]*)"/g)].map((m) => m[1]!)
  for (const o of outcomes) console.log(o)
  const failed = outcomes.filter((o) => o.startsWith('FAILED')).length
  console.log(`conformance: ${outcomes.length - failed} passed, ${failed} failed`)
  return failed === 0 && outcomes.length > 0 ? 0 : 1
}

process.exitCode = await main()
