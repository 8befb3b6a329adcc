// `--peers` (issue 14, run once for BENCHMARKS.md): RSS of wave, Reloader and
// confighash against one real kube-apiserver with 0, 1,000 and 10,000
// ConfigMaps + Secrets of 4 KiB. The peers are built by bench/build-peers.sh
// from WAVE_SRC / RELOADER_SRC. wave's webhook next to confighash's, for the
// paired added latency per server-side apply, is in wave-webhook.ts (scenario 4).

import { join } from 'node:path';
import { type ManagedProcess, startProcess } from '../../tools/cluster/processes.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { runScript } from '../../tools/cluster/scripts.js';
import { sleep } from '../../tools/lib/poll.js';
import { residentMb, type Webhook } from './children.js';
import { type ApiClient, forEachBounded } from './cluster.js';
import type { Scenario } from './report.js';

export const PEER_COUNTS = [0, 1_000, 10_000] as const;
const OBJECT_BYTES = 4 * 1024;
/** Long enough for an informer's initial list of 10,000 objects and a GC after it. */
const SETTLE_MS = 20_000;

export interface PeerBinaries {
  readonly wave: string;
  readonly reloader: string;
}

/** Builds (or finds in the cache) the peers; needs WAVE_SRC and RELOADER_SRC. */
export async function buildPeers(): Promise<PeerBinaries> {
  const paths = await runBuildPeers();
  if (!paths.wave || !paths.reloader) throw new Error('build-peers.sh built only one of the peers');
  return { wave: paths.wave, reloader: paths.reloader };
}

/** Reloader alone (the `scale` scenario); needs RELOADER_SRC only. */
export async function buildReloader(): Promise<string> {
  const paths = await runBuildPeers();
  if (!paths.reloader) throw new Error('build-peers.sh did not build Reloader: set RELOADER_SRC');
  return paths.reloader;
}

/** The `NAME=PATH` lines of bench/build-peers.sh, one per peer whose source is set. */
async function runBuildPeers(): Promise<Record<string, string>> {
  const stdout = await runScript(join(REPO_ROOT, 'bench/build-peers.sh'), 'building the peers');
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=', 2) as [string, string]),
  );
}

export interface PeerRow {
  readonly objects: number;
  readonly waveMb: number;
  readonly reloaderMb: number;
  readonly confighashMb: number;
}

export interface PeerDeps {
  readonly binaries: PeerBinaries;
  readonly api: ApiClient;
  readonly kubeconfig: string;
  readonly work: string;
  readonly namespace: string;
  startConfighash(name: string): Promise<Webhook>;
  log(line: string): void;
}

export async function measurePeers(deps: PeerDeps): Promise<PeerRow[]> {
  const rows: PeerRow[] = [];
  let created = 0;
  for (const objects of PEER_COUNTS) {
    await forEachBounded(created, objects, 8, (i) => createObject(deps, i));
    created = objects;
    const wave = startPeer(deps, `wave-${objects}`, deps.binaries.wave);
    const reloader = startPeer(deps, `reloader-${objects}`, deps.binaries.reloader);
    const confighash = await deps.startConfighash(`confighash-peers-${objects}`);
    try {
      await sleep(SETTLE_MS);
      const row = {
        objects,
        waveMb: await residentOf(wave),
        reloaderMb: await residentOf(reloader),
        confighashMb: await residentMb(confighash.pid),
      };
      deps.log(
        `  ${objects} objects: wave ${row.waveMb.toFixed(1)} MB, Reloader ${row.reloaderMb.toFixed(1)} MB, confighash ${row.confighashMb.toFixed(1)} MB`,
      );
      rows.push(row);
    } finally {
      await Promise.all([wave.stop(), reloader.stop(), confighash.stop()]);
    }
  }
  return rows;
}

const startPeer = (deps: PeerDeps, name: string, binary: string) =>
  startPeerProcess({ work: deps.work, kubeconfig: deps.kubeconfig }, name, binary, []);

/** A peer's process, its log in `work`; `work` is also its TMPDIR. */
export function startPeerProcess(
  where: { readonly work: string; readonly kubeconfig: string },
  name: string,
  binary: string,
  args: readonly string[],
): ManagedProcess {
  const logFile = join(where.work, `${name}.log`);
  // Its log lines go straight to the file (the shell's redirection, then exec: the
  // pid is the peer's): piped through this process, they would cost the bench CPU
  // on the same two cores while it times writes.
  return startProcess(
    name,
    'bash',
    ['-c', 'log=$1; shift; exec "$@" >>"$log" 2>&1', name, logFile, binary, ...args],
    `${logFile}.start`,
    {
      // Each peer finds the cluster the way it does in development: KUBECONFIG.
      // wave's webhook certificate directory follows TMPDIR.
      env: { ...process.env, KUBECONFIG: where.kubeconfig, TMPDIR: where.work },
    },
  );
}

async function residentOf(process_: ManagedProcess): Promise<number> {
  if (process_.child.exitCode !== null) {
    throw new Error(
      `${process_.name} exited (${process_.child.exitCode}); see ${process_.logFile}`,
    );
  }
  return residentMb(process_.child.pid ?? -1);
}

function createObject(deps: PeerDeps, index: number): Promise<unknown> {
  const configMap = index % 2 === 0;
  const value = 'x'.repeat(OBJECT_BYTES);
  const metadata = { name: `peer-${index}`, namespace: deps.namespace };
  const object = configMap
    ? { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { 'value.txt': value } }
    : {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata,
        data: { value: Buffer.from(value.slice(0, (OBJECT_BYTES * 3) / 4)).toString('base64') },
      };
  return deps.api.expect(
    [201],
    'POST',
    `/api/v1/namespaces/${deps.namespace}/${configMap ? 'configmaps' : 'secrets'}`,
    JSON.stringify(object),
  );
}

export function peersScenario(rows: readonly PeerRow[]): Scenario {
  const table = [
    '| ConfigMaps + Secrets of 4 KiB | wave | Reloader | confighash |',
    '|--:|--:|--:|--:|',
    ...rows.map(
      (r) =>
        `| ${r.objects.toLocaleString('en-US')} | ${r.waveMb.toFixed(1)} MB | ${r.reloaderMb.toFixed(1)} MB | ${r.confighashMb.toFixed(1)} MB |`,
    ),
  ].join('\n');
  const at = (objects: number) => rows.find((r) => r.objects === objects);
  const most = at(PEER_COUNTS[PEER_COUNTS.length - 1]!);
  const none = at(0);
  return {
    id: 'peers',
    title: 'Peers: RSS of wave, Reloader and confighash (real kube-apiserver)',
    runs: [],
    ratios: {},
    targets: [
      ...(most
        ? [
            {
              name: "confighash's RSS below both peers' at 10,000 objects",
              measured: `${most.confighashMb.toFixed(1)} vs ${most.waveMb.toFixed(1)} / ${most.reloaderMb.toFixed(1)} MB`,
              limit: '< both',
              holds: most.confighashMb < Math.min(most.waveMb, most.reloaderMb),
            },
          ]
        : []),
      ...(none
        ? [
            {
              name: "confighash's RSS within 2 × the peers' at 0 objects",
              measured: `${none.confighashMb.toFixed(1)} vs ${none.waveMb.toFixed(1)} / ${none.reloaderMb.toFixed(1)} MB`,
              limit: '≤ 2 × each',
              holds: none.confighashMb <= 2 * Math.min(none.waveMb, none.reloaderMb),
            },
          ]
        : []),
    ],
    notes: [
      `Each count: the objects created first (half ConfigMaps, half Secrets, ${OBJECT_BYTES / 1024} KiB each), then the three started fresh and measured ${SETTLE_MS / 1000} s later, idle (no reviews, no rollouts). wave runs without webhooks, Reloader with its defaults; both watch every namespace.`,
    ],
    details: { rows, table },
  };
}
