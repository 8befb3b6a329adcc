// A real node beside the local control plane (docs/design.md §8): kube-scheduler,
// containerd with runc and the CNI bridge, host-local and loopback plugins, and
// a kubelet — all inside namespaces of the run's own (namespaces.ts), so that
// nothing of it is left in the host however the run ends, and two runs never
// meet: each has its own bridge, addresses, mounts and cgroup root.
//
// Inside the run's network namespace:
//   lo       127.0.0.1, and 10.0.0.1 — the `kubernetes` Service's ClusterIP, so
//            pods reach the apiserver without kube-proxy
//   cni0     10.244.0.1/24, the node's address and the pods' gateway
//   apiserver 0.0.0.0:443 (this host reaches it through forward.ts)
// The node's state (containerd, kubelet) lives on a tmpfs mounted inside the
// run's mount namespace: gone with it.

import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '../lib/poll.js';
import { type ControlPlane, type ControlPlaneSite, startControlPlane } from './control-plane.js';
import { type Forward, forwardLoopbackToSocket } from './forward.js';
import { type Kubectl, kubectlFor } from './kubectl.js';
import { enterNewNamespaces, execInside, type RunNamespaces } from './namespaces.js';
import { type ManagedProcess, waitUntilReady } from './processes.js';
import { REPO_ROOT } from './repo.js';
import { runScript } from './scripts.js';

const TOOLS = join(REPO_ROOT, 'tools');
const RUN_PREFIX = 'confighash-node-';
export const NODE_NAME = 'confighash-node';
const NODE_ADDRESS = '10.244.0.1';
const POD_SUBNET = '10.244.0.0/24';
/**
 * The bridge's own MAC address (locally administered). Left unset, a Linux bridge takes the
 * lowest MAC among its ports and changes it as pods come and go; when the pod whose veth lent
 * it is removed, every other pod still sends to the old address, which no port owns any more,
 * and is cut off from the node's address (the apiserver, the gateway) until its ARP entry
 * expires — 10 s and more, measured in a network namespace of two veths. A webhook pod cut off
 * so cannot answer the apiserver, which falls open.
 */
export const BRIDGE_MAC = '02:00:0a:f4:00:01';
const KUBERNETES_SERVICE_IP = '10.0.0.1';
const APISERVER_PORT = 443;
const CNI_PLUGINS = '/usr/lib/cni';
const RUNC = '/usr/sbin/runc';
/** The sandbox image (tools/image/test-images.sh); containerd is told never to pull it. */
export const PAUSE_IMAGE = 'confighash.local/pause:1';

/**
 * What a process other than the run's own needs to use a running node (a test file's worker
 * beside the suite's one shared node): plain data, so that it can be handed across processes.
 */
export interface NodeAccess {
  readonly kubeconfig: string;
  readonly dir: string;
  /** nsinit's PID: the way into the run's namespaces. */
  readonly pid: number;
  /** The node binaries (tools/build-node.sh). */
  readonly bin: string;
  /** containerd's and the kubelet's data, inside the run's mount namespace. */
  readonly state: string;
}

/** A running node as another process uses it: commands inside it, and its containerd. */
export interface AttachedNode {
  readonly kubeconfig: string;
  readonly dir: string;
  readonly namespaces: Pick<RunNamespaces, 'pid' | 'exec'>;
  /** `ctr` against the node's containerd, in the `k8s.io` namespace. */
  ctr(args: readonly string[]): Promise<string>;
}

export interface LocalNode extends AttachedNode {
  readonly controlPlane: ControlPlane;
  readonly namespaces: RunNamespaces;
  readonly access: NodeAccess;
  stop(): Promise<void>;
}

export function attachNode(access: NodeAccess): AttachedNode {
  const exec = (command: string, args: readonly string[]) => execInside(access.pid, command, args);
  return {
    kubeconfig: access.kubeconfig,
    dir: access.dir,
    namespaces: { pid: access.pid, exec },
    ctr: ctrIn(exec, access.bin, access.state),
  };
}

/** `ctr` against a node's containerd, in the `k8s.io` namespace. */
function ctrIn(exec: RunNamespaces['exec'], bin: string, state: string): Ctr {
  return (args) =>
    exec(join(bin, 'ctr'), [
      `--address=${join(state, 'containerd.sock')}`,
      '--namespace=k8s.io',
      ...args,
    ]);
}

export interface NodeOptions {
  readonly log?: (line: string) => void;
  /** OCI archives to import before the kubelet starts (the pause image among them). */
  readonly images?: readonly string[];
}

/** What the parts of one run share: where it lives, and what it started (stopped in reverse). */
interface NodeRun {
  readonly namespaces: RunNamespaces;
  /** The node binaries (tools/build-node.sh). */
  readonly bin: string;
  /** The run's directory: configs and logs, visible from the host. */
  readonly dir: string;
  /** containerd's and the kubelet's data: a tmpfs inside the run's mount namespace. */
  readonly state: string;
  readonly processes: ManagedProcess[];
}

type Ctr = (args: readonly string[]) => Promise<string>;

export async function startLocalNode(options: NodeOptions = {}): Promise<LocalNode> {
  const log = options.log ?? (() => {});
  await removeStaleRuns(log);
  const bin = await buildNodeBinaries(log);
  const dir = await mkdtemp(join(tmpdir(), RUN_PREFIX));
  const cgroupRoot = `/confighash-${dir.slice(dir.lastIndexOf(RUN_PREFIX) + RUN_PREFIX.length)}`;
  const namespaces = await enterNewNamespaces(join(bin, 'nsinit'));
  await writeFile(join(dir, 'nsinit.pid'), `${namespaces.pid}\n`);
  const run: NodeRun = { namespaces, bin, dir, state: join(dir, 'node'), processes: [] };
  let controlPlane: ControlPlane | undefined;
  let forward: Forward | undefined;
  const stop = async () => {
    for (const process of [...run.processes].reverse()) await process.stop();
    await controlPlane?.stop();
    await namespaces.stop();
    await forward?.close();
    await removeCgroupRoot(cgroupRoot);
    if (!process.env.CONFIGHASH_KEEP_LOGS) await rm(dir, { recursive: true, force: true });
  };
  try {
    await prepareNamespaces(namespaces, dir);
    await makeCgroupRoot(cgroupRoot);
    const site = nodeSite(run, (opened) => {
      forward = opened;
    });
    controlPlane = await startControlPlane({ log, site });
    log('starting containerd');
    const ctr = await startContainerd(run);
    for (const archive of options.images ?? []) {
      await ctr(['images', 'import', '--platform=linux/amd64', archive]);
    }
    log('starting kubelet and kube-scheduler');
    await startKubeletAndScheduler(run, controlPlane.componentKubeconfig, cgroupRoot);
    await waitForNodeReady(run, kubectlFor(controlPlane.kubeconfig));
    log(`node ${NODE_NAME} Ready (logs in ${dir})`);
    const kubeconfig = controlPlane.kubeconfig;
    return {
      controlPlane,
      kubeconfig,
      dir,
      namespaces,
      ctr,
      access: { kubeconfig, dir, pid: namespaces.pid, bin, state: run.state },
      stop,
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

/** The control plane inside the run: fixed ports (the namespace is ours), reached through forward.ts. */
function nodeSite(run: NodeRun, opened: (forward: Forward) => void): ControlPlaneSite {
  return {
    dir: run.dir,
    start: (name, command, args, logFile) => run.namespaces.start(name, command, args, logFile),
    listen: async () => ({
      address: '0.0.0.0',
      etcdClient: 2379,
      etcdPeer: 2380,
      apiserver: APISERVER_PORT,
    }),
    advertiseAddress: NODE_ADDRESS,
    async expose(port) {
      const socket = join(run.dir, 'apiserver.sock');
      const forwarder = run.namespaces.start(
        'apiserver-forward',
        process.execPath,
        [join(TOOLS, 'node/unix-to-tcp.mjs'), socket, '127.0.0.1', String(port)],
        join(run.dir, 'apiserver-forward.log'),
      );
      run.processes.push(forwarder);
      await waitUntilReady(forwarder, () => fileExists(socket));
      const forward = await forwardLoopbackToSocket(socket);
      opened(forward);
      return `https://127.0.0.1:${forward.port}`;
    },
    dialsEtcd: false,
    apiserverFlags: [
      '--allow-privileged=false',
      // Webhooks are called through their Service's endpoints: no kube-proxy here.
      '--enable-aggregator-routing=true',
      // `kubectl logs` dials the node's address, not its name (which no resolver knows).
      '--kubelet-preferred-address-types=InternalIP',
    ],
    controllerManagerFlags: [
      // Every namespace gets kube-root-ca.crt: in-cluster clients trust the apiserver with it.
      `--root-ca-file=${join(run.dir, 'ca.crt')}`,
      // A load row makes hundreds of Deployments; at the default 20 requests/s their
      // ReplicaSets would keep the controllers minutes behind every later rollout on the node.
      '--kube-api-qps=200',
      '--kube-api-burst=400',
    ],
  };
}

/** Starts containerd (its shim on PATH) and returns `ctr` against it, in the `k8s.io` namespace. */
async function startContainerd(run: NodeRun): Promise<Ctr> {
  const config = join(run.dir, 'containerd.toml');
  await writeFile(config, containerdToml(run.state));
  const containerd = run.namespaces.start(
    'containerd',
    join(run.bin, 'containerd'),
    ['--config', config],
    join(run.dir, 'containerd.log'),
    { env: { ...process.env, PATH: `${run.bin}:${process.env.PATH}` } },
  );
  run.processes.push(containerd);
  const ctr = ctrIn(run.namespaces.exec, run.bin, run.state);
  await waitUntilReady(containerd, async () => Boolean(await ctr(['version'])));
  return ctr;
}

async function startKubeletAndScheduler(
  run: NodeRun,
  kubeconfig: string,
  cgroupRoot: string,
): Promise<void> {
  const { namespaces, bin, dir, state } = run;
  // The CNI config lives with the node's state, on the run's own tmpfs.
  await writeFile(join(dir, 'cni.conflist'), cniConflist(join(state, 'cni-ipam')));
  await namespaces.exec('sh', [
    '-c',
    `mkdir -p ${state}/cni && cp ${dir}/cni.conflist ${state}/cni/10-confighash.conflist`,
  ]);
  const kubeletConfig = join(dir, 'kubelet.yaml');
  await writeFile(kubeletConfig, kubeletYaml(state, cgroupRoot));
  run.processes.push(
    namespaces.start(
      'kubelet',
      join(bin, 'kubelet'),
      [
        `--config=${kubeletConfig}`,
        `--kubeconfig=${kubeconfig}`,
        `--root-dir=${join(state, 'kubelet')}`,
        `--node-ip=${NODE_ADDRESS}`,
        `--hostname-override=${NODE_NAME}`,
        '--v=1',
      ],
      join(dir, 'kubelet.log'),
    ),
    namespaces.start(
      'kube-scheduler',
      join(bin, 'kube-scheduler'),
      [`--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--secure-port=0', '--v=1'],
      join(dir, 'kube-scheduler.log'),
    ),
  );
}

async function waitForNodeReady(run: NodeRun, kubectl: Kubectl): Promise<void> {
  const kubelet = run.processes.find((process) => process.name === 'kubelet')!;
  await waitUntilReady(kubelet, async () => {
    const result = await kubectl([
      'get',
      'node',
      NODE_NAME,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
    ]);
    return result.stdout.trim() === 'True';
  });
}

/** Builds (once) or finds kubelet, kube-scheduler, containerd, ctr and nsinit. */
function buildNodeBinaries(log: (line: string) => void): Promise<string> {
  return runScript(join(TOOLS, 'build-node.sh'), 'building the node', { log });
}

/** Loopback, the Service address, the bridge; a private /run, CNI cache and node state. */
async function prepareNamespaces(namespaces: RunNamespaces, dir: string): Promise<void> {
  const script = [
    'set -e',
    'ip link set lo up',
    `ip addr add ${KUBERNETES_SERVICE_IP}/32 dev lo`,
    `ip link add cni0 address ${BRIDGE_MAC} type bridge`,
    `ip addr add ${NODE_ADDRESS}/24 dev cni0`,
    'ip link set cni0 up',
    // Private to the run's mount namespace: runc and shim state, pod network
    // namespaces, the CNI result cache, and containerd's and the kubelet's data.
    'mount -t tmpfs -o mode=0755 tmpfs /run',
    'mkdir -p /var/lib/cni && mount -t tmpfs -o mode=0755 tmpfs /var/lib/cni',
    `mkdir -p ${dir}/node && mount -t tmpfs -o mode=0755 tmpfs ${dir}/node`,
  ].join('\n');
  await namespaces.exec('sh', ['-c', script]);
}

/** Every cgroup v1 hierarchy (or the v2 tree) this host mounts under /sys/fs/cgroup. */
async function cgroupHierarchies(): Promise<string[]> {
  const mounts = await readFile('/proc/self/mounts', 'utf8');
  return mounts
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2] === 'cgroup' || fields[2] === 'cgroup2')
    .map((fields) => fields[1]!)
    .filter((path) => path.startsWith('/sys/fs/cgroup'));
}

/** The kubelet's `cgroupRoot` must exist in every hierarchy; cpuset needs its CPUs and memory nodes. */
async function makeCgroupRoot(root: string): Promise<void> {
  for (const hierarchy of await cgroupHierarchies()) {
    const path = join(hierarchy, root);
    await mkdir(path, { recursive: true });
    if (hierarchy.endsWith('/cpuset')) {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        const parent = (await readFile(join(hierarchy, file), 'utf8')).trim();
        await writeFile(join(path, file), parent);
      }
    }
  }
}

/** Removes a run's cgroups, deepest first; their processes died with the namespaces. */
async function removeCgroupRoot(root: string): Promise<void> {
  for (const hierarchy of await cgroupHierarchies()) {
    await removeCgroupTree(join(hierarchy, root));
  }
}

async function removeCgroupTree(path: string): Promise<void> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isDirectory()) await removeCgroupTree(join(path, entry.name));
  }
  // A cgroup whose last process is still being torn down refuses for a moment.
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await rmdir(path);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY') throw error;
      await sleep(100);
    }
  }
}

/**
 * What a killed run leaves: its directory and its cgroups (the kernel took
 * everything else with its namespaces). A run is gone when the nsinit it
 * recorded no longer runs.
 */
export async function removeStaleRuns(log: (line: string) => void = () => {}): Promise<void> {
  const hierarchies = await cgroupHierarchies();
  const live = new Set<string>();
  for (const entry of await readdir(tmpdir())) {
    if (!entry.startsWith(RUN_PREFIX)) continue;
    const dir = join(tmpdir(), entry);
    if (await runIsAlive(dir)) {
      live.add(entry.slice(RUN_PREFIX.length));
      continue;
    }
    log(`removing ${dir}, left by a run that was killed`);
    await rm(dir, { recursive: true, force: true });
  }
  for (const hierarchy of hierarchies) {
    for (const entry of await readdir(hierarchy).catch(() => [] as string[])) {
      const runId = /^confighash-(.+)$/.exec(entry)?.[1];
      if (runId === undefined || live.has(runId)) continue;
      await removeCgroupTree(join(hierarchy, entry));
    }
  }
}

async function runIsAlive(dir: string): Promise<boolean> {
  const pid = Number((await readFile(join(dir, 'nsinit.pid'), 'utf8').catch(() => '')).trim());
  if (!pid) {
    // A run writes its PID file right after it starts; a young directory may be one starting.
    const age = Date.now() - (await stat(dir)).mtimeMs;
    return age < 60_000;
  }
  const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return command.includes('nsinit');
}

async function fileExists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

/** Where containerd reads registry hosts from: DIR/HOST[:PORT]/hosts.toml. */
export function registryHostsDir(state: string): string {
  return join(state, 'certs.d');
}

function containerdToml(state: string): string {
  return `version = 3
root = "${state}/containerd"
state = "${state}/containerd-state"
[grpc]
  address = "${state}/containerd.sock"
[ttrpc]
  address = "${state}/containerd.sock.ttrpc"
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '${PAUSE_IMAGE}'
    # Per-registry hosts.toml files (a plain-HTTP registry in the run, say), on the run's tmpfs.
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '${registryHostsDir(state)}'
  [plugins.'io.containerd.cri.v1.runtime']
    # Root here lacks CAP_SYS_RESOURCE: without this every sandbox fails with
    # "can't get final child's PID from pipe: EOF".
    restrict_oom_score_adj = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = '${RUNC}'
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['${CNI_PLUGINS}']
      conf_dir = '${state}/cni'
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
`;
}

function cniConflist(ipamDir: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'confighash',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_SUBNET, gateway: NODE_ADDRESS }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: ipamDir,
          },
        },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  );
}

function kubeletYaml(state: string, cgroupRoot: string): string {
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: NODE_ADDRESS,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      // The node lives in the run's own network namespace; only the apiserver reaches it.
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      cgroupDriver: 'cgroupfs',
      cgroupRoot,
      cgroupsPerQOS: true,
      enforceNodeAllocatable: ['pods'],
      // This kind of machine mounts cgroup v1.
      failCgroupV1: false,
      failSwapOn: false,
      containerRuntimeEndpoint: `unix://${state}/containerd.sock`,
      podLogsDir: `${state}/pod-logs`,
      evictionHard: {
        'memory.available': '100Mi',
        'nodefs.available': '1%',
        'imagefs.available': '1%',
        'nodefs.inodesFree': '1%',
      },
      imageGCHighThresholdPercent: 99,
      imageGCLowThresholdPercent: 98,
      serializeImagePulls: false,
      resolvConf: '/etc/resolv.conf',
      // Pods starting and stopping quickly: the test suite waits on them.
      nodeStatusUpdateFrequency: '4s',
      syncFrequency: '10s',
      fileCheckFrequency: '5s',
    },
    null,
    2,
  );
}
