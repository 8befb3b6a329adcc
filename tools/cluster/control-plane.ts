// A real, local Kubernetes control plane: etcd, kube-apiserver and
// kube-controller-manager built from Go modules (tools/build-control-plane.sh),
// on loopback with free ports and a fresh PKI per run. No kubelet and no
// scheduler: pods stay Pending, while Deployments, ReplicaSets, the garbage
// collector and namespaces are real — which is what proves a rollout.

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { httpRequest } from './http.js';
import { generateControlPlanePki } from './pki.js';
import { freePort } from './ports.js';
import { type ManagedProcess, startProcess, waitUntilReady } from './processes.js';
import { REPO_ROOT } from './repo.js';
import { runScript } from './scripts.js';

const BUILD_SCRIPT = join(REPO_ROOT, 'tools/build-control-plane.sh');
const execFileAsync = promisify(execFile);

export interface ControlPlane {
  /** Working directory: PKI, kubeconfig, data and logs of this run. */
  readonly dir: string;
  /** Admin kubeconfig (client certificate in system:masters). */
  readonly kubeconfig: string;
  /** The same credentials, for the components at the site (the apiserver's own address). */
  readonly componentKubeconfig: string;
  readonly server: string;
  readonly caCert: string;
  readonly processes: readonly ManagedProcess[];
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Progress lines for a person watching; silent by default. */
  readonly log?: (line: string) => void;
  /** Where the processes run; default: this host, on loopback. */
  readonly site?: ControlPlaneSite;
  /**
   * More kube-apiserver flags, after the site's: for a test about the apiserver's own
   * configuration (e.g. --admission-control-config-file, whose files the test writes first).
   */
  readonly apiserverFlags?: readonly string[];
}

/** Where the control plane's processes run and how this process reaches them. */
export interface ControlPlaneSite {
  /** The run's directory, when the site made it (it then removes it too). */
  readonly dir?: string;
  start(name: string, command: string, args: readonly string[], logFile: string): ManagedProcess;
  /** Where the components listen there. */
  listen(): Promise<{ address: string; etcdClient: number; etcdPeer: number; apiserver: number }>;
  /** The apiserver's address as the components there dial it. */
  readonly advertiseAddress: string;
  /** The apiserver URL this process dials, given its port there. */
  expose(apiserverPort: number): Promise<string>;
  /** False when etcd cannot be dialled from here; the apiserver's readiness then covers it. */
  readonly dialsEtcd: boolean;
  readonly apiserverFlags: readonly string[];
  readonly controllerManagerFlags: readonly string[];
}

/** The default site: everything on this host's loopback, ports asked of the kernel. */
export const LOOPBACK: ControlPlaneSite = {
  start: startProcess,
  async listen() {
    const [etcdClient, etcdPeer, apiserver] = [
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    return { address: '127.0.0.1', etcdClient, etcdPeer, apiserver };
  },
  advertiseAddress: '127.0.0.1',
  expose: async (port) => `https://127.0.0.1:${port}`,
  dialsEtcd: true,
  apiserverFlags: ['--allow-privileged=false'],
  controllerManagerFlags: [
    '--controllers=deployment-controller,replicaset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller',
  ],
};

/** Builds the binaries once (minutes, cold) or finds them; returns their directory. */
export function ensureControlPlaneBinaries(
  log: (line: string) => void = () => {},
): Promise<string> {
  return runScript(BUILD_SCRIPT, 'building the control plane', { log });
}

/** What the steps of one start share: where it runs, its files, and what it started. */
interface ControlPlaneRun {
  readonly site: ControlPlaneSite;
  readonly bin: string;
  readonly dir: string;
  readonly log: (line: string) => void;
  readonly processes: ManagedProcess[];
  readonly apiserverFlags: readonly string[];
}

/** The files of a run's PKI and kubeconfigs, by role. */
interface ControlPlaneFiles {
  readonly ca: string;
  readonly apiserverCert: string;
  readonly apiserverKey: string;
  readonly saPub: string;
  readonly saKey: string;
  readonly kubeconfig: string;
  readonly componentKubeconfig: string;
}

type Pki = Awaited<ReturnType<typeof generateControlPlanePki>>;
type Ports = Awaited<ReturnType<ControlPlaneSite['listen']>>;

/** pki → etcd → kube-apiserver → kube-controller-manager; each step waits until its part is ready. */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? (() => {});
  const site = options.site ?? LOOPBACK;
  const bin = await ensureControlPlaneBinaries(log);
  const dir = site.dir ?? (await mkdtemp(join(tmpdir(), 'confighash-cp-')));
  const run: ControlPlaneRun = {
    site,
    bin,
    dir,
    log,
    processes: [],
    apiserverFlags: options.apiserverFlags ?? [],
  };
  const stop = async () => {
    for (const process of [...run.processes].reverse()) await process.stop();
    // CONFIGHASH_KEEP_LOGS=1 keeps the logs of a run for a post-mortem.
    if (!site.dir && !process.env.CONFIGHASH_KEEP_LOGS) {
      await rm(dir, { recursive: true, force: true });
    }
  };
  try {
    const { pki, files } = await writePki(run);
    const ports = await site.listen();
    const etcdUrl = await startEtcd(run, ports);
    const server = await startApiserver(run, ports, etcdUrl, files, pki);
    await startControllerManager(run, files);
    log(`control plane ready (logs in ${dir})`);
    return {
      dir,
      kubeconfig: files.kubeconfig,
      componentKubeconfig: files.componentKubeconfig,
      server,
      caCert: pki.ca.cert,
      processes: run.processes,
      stop,
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

/** A fresh CA, the apiserver's serving certificate, the admin's and the ServiceAccount keys. */
async function writePki(run: ControlPlaneRun): Promise<{ pki: Pki; files: ControlPlaneFiles }> {
  const pki = await generateControlPlanePki([run.site.advertiseAddress]);
  const files: ControlPlaneFiles = {
    ca: join(run.dir, 'ca.crt'),
    apiserverCert: join(run.dir, 'apiserver.crt'),
    apiserverKey: join(run.dir, 'apiserver.key'),
    saPub: join(run.dir, 'sa.pub'),
    saKey: join(run.dir, 'sa.key'),
    kubeconfig: join(run.dir, 'kubeconfig'),
    componentKubeconfig: join(run.dir, 'components.kubeconfig'),
  };
  await writeFile(files.ca, pki.ca.cert);
  await writeFile(files.apiserverCert, pki.apiserver.cert);
  await writeFile(files.apiserverKey, pki.apiserver.key, { mode: 0o600 });
  await writeFile(files.saPub, pki.serviceAccount.publicKey);
  await writeFile(files.saKey, pki.serviceAccount.privateKey, { mode: 0o600 });
  return { pki, files };
}

/** Starts etcd (no fsync: a test's data need not survive a crash); returns its client URL. */
async function startEtcd(run: ControlPlaneRun, ports: Ports): Promise<string> {
  const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
  const etcdPeer = `http://127.0.0.1:${ports.etcdPeer}`;
  await mkdir(join(run.dir, 'etcd'), { mode: 0o700 });
  run.log(`starting etcd on ${etcdUrl}`);
  const etcd = run.site.start(
    'etcd',
    join(run.bin, 'etcd'),
    [
      '--name=confighash',
      `--data-dir=${join(run.dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${etcdPeer}`,
      `--initial-advertise-peer-urls=${etcdPeer}`,
      `--initial-cluster=confighash=${etcdPeer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    join(run.dir, 'etcd.log'),
  );
  run.processes.push(etcd);
  if (run.site.dialsEtcd) await waitUntilReady(etcd, () => httpOk(`${etcdUrl}/health`));
  return etcdUrl;
}

/** Starts kube-apiserver, writes the kubeconfigs, waits for /readyz; returns the URL this process dials. */
async function startApiserver(
  run: ControlPlaneRun,
  ports: Ports,
  etcdUrl: string,
  files: ControlPlaneFiles,
  pki: Pki,
): Promise<string> {
  const { site, dir } = run;
  run.log(`starting kube-apiserver on ${ports.address}:${ports.apiserver}`);
  const apiserver = site.start(
    'kube-apiserver',
    join(run.bin, 'kube-apiserver'),
    [
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${ports.address}`,
      `--advertise-address=${site.advertiseAddress}`,
      `--secure-port=${ports.apiserver}`,
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--tls-cert-file=${files.apiserverCert}`,
      `--tls-private-key-file=${files.apiserverKey}`,
      `--client-ca-file=${files.ca}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${files.saPub}`,
      `--service-account-signing-key-file=${files.saKey}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      ...site.apiserverFlags,
      ...run.apiserverFlags,
      '--profiling=false',
      '--v=1',
    ],
    join(dir, 'kube-apiserver.log'),
  );
  run.processes.push(apiserver);
  const server = await site.expose(ports.apiserver);
  const componentServer = `https://${site.advertiseAddress}:${ports.apiserver}`;
  for (const [file, url] of [
    [files.kubeconfig, server],
    [files.componentKubeconfig, componentServer],
  ] as const) {
    await writeFile(file, kubeconfigYaml(url, pki.ca.cert, pki.admin.cert, pki.admin.key), {
      mode: 0o600,
    });
  }
  const adminTls = { ca: pki.ca.cert, cert: pki.admin.cert, key: pki.admin.key };
  await waitUntilReady(apiserver, () => httpsOk(`${server}/readyz`, adminTls));
  return server;
}

/** Starts kube-controller-manager; ready once its serviceaccount controller has made `default`. */
async function startControllerManager(
  run: ControlPlaneRun,
  files: ControlPlaneFiles,
): Promise<void> {
  run.log('starting kube-controller-manager');
  const controllerManager = run.site.start(
    'kube-controller-manager',
    join(run.bin, 'kube-controller-manager'),
    [
      `--kubeconfig=${files.componentKubeconfig}`,
      ...run.site.controllerManagerFlags,
      '--leader-elect=false',
      '--secure-port=0',
      '--use-service-account-credentials=false',
      '--concurrent-deployment-syncs=5',
      '--v=1',
    ],
    join(run.dir, 'kube-controller-manager.log'),
  );
  run.processes.push(controllerManager);
  await waitUntilReady(controllerManager, async () => {
    const { stdout } = await execFileAsync('kubectl', [
      `--kubeconfig=${files.kubeconfig}`,
      'get',
      'serviceaccount',
      'default',
      '-n',
      'default',
      '-o',
      'name',
    ]).catch(() => ({ stdout: '' }));
    return stdout.trim() === 'serviceaccount/default';
  });
}

async function httpOk(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return response.ok;
}

async function httpsOk(
  url: string,
  tls: { ca: string; cert: string; key: string },
): Promise<boolean> {
  const response = await httpRequest(url, { ...tls, timeoutMs: 2000 }).catch(() => undefined);
  return response?.status === 200;
}

function kubeconfigYaml(server: string, ca: string, cert: string, key: string): string {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'confighash-local', cluster: { server, 'certificate-authority-data': b64(ca) } },
      ],
      users: [
        {
          name: 'confighash-admin',
          user: { 'client-certificate-data': b64(cert), 'client-key-data': b64(key) },
        },
      ],
      contexts: [
        {
          name: 'confighash-local',
          context: { cluster: 'confighash-local', user: 'confighash-admin' },
        },
      ],
      'current-context': 'confighash-local',
    },
    null,
    2,
  );
}
