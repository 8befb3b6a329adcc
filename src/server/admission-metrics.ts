// Prometheus metrics for the admission path. A registry per app, never the
// global one, so that tests and several apps in one process do not collide.

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { LookupRecord, Outcome, SkipCode, SnapshotResult } from '../admission/result.js';
import { countPreviousKeyHashes } from '../runtime/index.js';

type RequestOutcome = Outcome | 'invalid' | 'error';

export interface AdmissionMetrics {
  readonly registry: Registry;
  observeReview(outcome: RequestOutcome, seconds: number, dryRun: boolean): void;
  observeLookups(lookups: readonly LookupRecord[]): void;
  /** What became of the snapshots a review made sure of (docs/design.md §13). */
  observeSnapshotResults(results: readonly SnapshotResult[]): void;
  observeSkip(reason: SkipCode): void;
  observeHashChange(): void;
  /** A write kept a hash made with a previous hash key. */
  observePreviousKeyHash(): void;
  /** The snapshot keeper wrote (docs/design.md §13): owners set, owners dropped, a snapshot deleted. */
  observeKeeperAction(action: 'set-owners' | 'drop-owners' | 'delete'): void;
  /** How many snapshots the keeper's last resync listed. */
  observeSnapshots(count: number): void;
}

export function createAdmissionMetrics(
  options: { collectProcessMetrics?: boolean } = {},
): AdmissionMetrics {
  const registry = new Registry();
  if (options.collectProcessMetrics ?? true) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'confighash_admission_requests_total',
    help: 'Admission reviews answered, by outcome (patched, adopted, unchanged, kept-old, skipped, invalid, error).',
    labelNames: ['outcome', 'dry_run'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'confighash_admission_duration_seconds',
    help: 'Time from request received to response ready, lookups included.',
    labelNames: ['outcome'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const lookups = new Counter({
    name: 'confighash_lookups_total',
    help: 'ConfigMap and Secret reads, by kind and result (found, absent, timeout, forbidden, ..., over-budget: no room in the lookup byte budget).',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  const hashChanges = new Counter({
    name: 'confighash_hash_changes_total',
    help: 'Updates whose pod template hash changed because config changed: each one rolls the workload.',
    registers: [registry],
  });
  const skips = new Counter({
    name: 'confighash_admission_skips_total',
    help: 'Reviews skipped, by reason: not-handled (kind, operation, opted out, not annotated in a namespace labelled confighash.dev/workloads=annotated, …) or namespace-not-opted-in (as confighash sees the namespace; a review POSTed straight to the port, or one in an excluded namespace).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const keeperActions = new Counter({
    name: 'confighash_snapshot_keeper_actions_total',
    help: 'Snapshot keeper writes that took effect, by action: set-owners (its owners became what names it), drop-owners (nothing names it), delete.',
    labelNames: ['action'] as const,
    registers: [registry],
  });
  const snapshotResults = new Counter({
    name: 'confighash_snapshots_total',
    help: 'Snapshots a review made sure of, by result: created, reused (found made), would-create (a dry run), failed (quota, the 1 MiB limit, RBAC, the fence, a name taken: that source stays live).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const snapshots = new Gauge({
    name: 'confighash_snapshots_listed',
    help: 'Snapshots (ConfigMaps labelled confighash.dev/snapshot=true) in the cluster at the keeper’s last resync.',
    registers: [registry],
  });
  const requestChildren = new Map<string, ReturnType<typeof requests.labels>>();
  const durationChildren = new Map<string, ReturnType<typeof duration.labels>>();
  const lookupChildren = new Map<string, ReturnType<typeof lookups.labels>>();
  return {
    registry,
    // Label children are looked up once per label set, not on every call.
    observeReview(outcome, seconds, dryRun) {
      memo(requestChildren, `${outcome}|${dryRun}`, () =>
        requests.labels({ outcome, dry_run: String(dryRun) }),
      ).inc();
      memo(durationChildren, outcome, () => duration.labels({ outcome })).observe(seconds);
    },
    observeLookups(records) {
      for (const { kind, result } of records) {
        memo(lookupChildren, `${kind}|${result}`, () => lookups.labels({ kind, result })).inc();
      }
    },
    observeSnapshotResults(results) {
      for (const result of results) snapshotResults.labels({ result }).inc();
    },
    observeSkip: (reason) => skips.labels({ reason }).inc(),
    observeHashChange: () => hashChanges.inc(),
    observePreviousKeyHash: countPreviousKeyHashes(registry, 'admission'),
    observeKeeperAction: (action) => keeperActions.labels({ action }).inc(),
    observeSnapshots: (count) => snapshots.set(count),
  };
}

function memo<T>(cache: Map<string, T>, key: string, create: () => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    value = create();
    cache.set(key, value);
  }
  return value;
}
