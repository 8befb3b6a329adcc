// Follow mode while this replica leads: metadata-only watches of ConfigMaps and
// Secrets in follow namespaces trigger reconciles of the workloads that
// reference the changed object; a full resync at start and periodically
// catches whatever happened while nobody watched. A touch is the empty merge
// patch: the API server calls the webhook, which writes the new hash.

import type { Evaluator } from '../evaluate.js';
import { formatSource, sourceOfResource } from '../sources.js';
import {
  findSources,
  HANDLED_KINDS,
  isObject,
  isWindowOpen,
  nextWindowOpening,
  parseRolloutWindow,
  podTemplateOf,
  ROLLOUT_WINDOW,
  readWorkload,
  type WorkloadKind,
  workloadAnnotations,
} from '../workload/index.js';
import type { FollowMetrics } from './metrics.js';
import type { ConfigChange, ConfigResource, FollowApi, NamespaceInfo } from './ports.js';
import { TokenBucket } from './rate-limit.js';
import { decideReconcile } from './reconcile.js';
import { type DueTouch, TouchSchedule } from './schedule.js';
import { sleep } from './sleep.js';

export interface FollowOptions {
  readonly resyncMs: number;
  readonly debounceMs: number;
  readonly minIntervalMs: number;
  readonly ratePerSecond: number;
  readonly burst: number;
}

export const DEFAULT_FOLLOW_OPTIONS: FollowOptions = {
  resyncMs: 10 * 60_000,
  debounceMs: 10_000,
  minIntervalMs: 60_000,
  ratePerSecond: 5,
  burst: 20,
};

export interface FollowLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface FollowerDependencies {
  readonly api: FollowApi;
  readonly evaluate: Evaluator;
  readonly metrics: FollowMetrics;
  readonly logger: FollowLogger;
  readonly options: FollowOptions;
}

const RESYNC = 'resync';
const RETRY_MS = 15_000;
const LOOKUP_TIMEOUT_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;

/** Runs until `signal` aborts (leadership lost or shutdown); then stops at once. */
export async function runFollower(deps: FollowerDependencies, signal: AbortSignal): Promise<void> {
  const { api, evaluate, metrics, logger, options } = deps;
  const schedule = new TouchSchedule({
    debounceMs: options.debounceMs,
    minIntervalMs: options.minIntervalMs,
    maxDelayMs: Math.max(6 * options.debounceMs, 60_000),
  });
  const bucket = new TokenBucket(options.ratePerSecond, options.burst, Date.now());
  const namespaces = new Map<string, { info: NamespaceInfo; stop: AbortController }>();
  const announcedDeferrals = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let processing = false;

  // --- scheduling --------------------------------------------------------------

  const request = (key: string, reason: string) => {
    const now = Date.now();
    if (schedule.earliestAllowed(key) > now + options.debounceMs) metrics.deferred('min-interval');
    schedule.request(key, reason, now);
    metrics.pending(schedule.size);
    arm();
  };

  const arm = () => {
    if (signal.aborted || processing) return;
    clearTimeout(timer);
    const next = schedule.nextDueAt();
    if (next !== undefined)
      timer = setTimeout(() => void processDue(), Math.max(0, next - Date.now()));
  };

  const processDue = async () => {
    if (processing || signal.aborted) return;
    processing = true;
    try {
      for (const touch of schedule.takeDue(Date.now())) {
        if (signal.aborted) return;
        await handle(touch);
      }
    } finally {
      processing = false;
      metrics.pending(schedule.size);
      arm();
    }
  };

  const handle = async (touch: DueTouch) => {
    const { kind, namespace, name } = parseKey(touch.key);
    const fields = { kind: kind.kind, namespace, name, reasons: touch.reasons };
    try {
      const object = await api.getWorkload(namespace, kind, name, signal);
      if (!isObject(object)) return;
      if (!withinWindow(touch, object, namespace, fields)) return;
      const workload = readWorkload(object, kind);
      const evaluation = await evaluate(
        workload,
        namespace,
        AbortSignal.any([signal, AbortSignal.timeout(LOOKUP_TIMEOUT_MS)]),
      );
      const decision = decideReconcile(workload, evaluation);
      if (!decision.touch) {
        if (decision.why === 'lookup-failed') {
          metrics.reconcileError();
          metrics.deferred('error');
          logger.warn(
            { ...fields, why: decision.why },
            'follow: cannot read the sources; will retry',
          );
          schedule.defer(touch, Date.now() + RETRY_MS);
        } else {
          logger.debug({ ...fields, why: decision.why }, 'follow: nothing to roll');
        }
        return;
      }
      const token = bucket.take(Date.now());
      if (!token.ok) {
        metrics.deferred('rate-limit');
        schedule.defer(touch, Date.now() + token.waitMs);
        return;
      }
      await api.touch(namespace, kind, name, signal);
      schedule.touched(touch.key, Date.now());
      announcedDeferrals.delete(touch.key);
      metrics.touched(kind.kind);
      const changed = touch.reasons.filter((reason) => reason !== RESYNC);
      const sources = evaluation.status === 'hashed' ? evaluation.sources : '';
      const note =
        decision.why === 'not-yet-hashed'
          ? `confighash: recorded the config hash of ${sources} (no restart)`
          : changed.length > 0
            ? `confighash: ${changed.join(', ')} changed; rolling`
            : `confighash: config changed while not watched (sources: ${sources}); rolling`;
      logger.info({ ...fields, why: decision.why }, 'follow: touched');
      await api
        .recordEvent(
          {
            kind,
            namespace,
            name,
            uid: uidOf(object),
            type: 'Normal',
            reason: decision.why === 'not-yet-hashed' ? 'ConfigHashRecorded' : 'ConfigChanged',
            action: 'Touch',
            note: truncate(note),
          },
          signal,
        )
        .catch((error: Error) =>
          logger.warn({ ...fields, err: error.message }, 'follow: event not recorded'),
        );
    } catch (error) {
      if (signal.aborted) return;
      metrics.reconcileError();
      metrics.deferred('error');
      logger.warn(
        { ...fields, err: (error as Error).message },
        'follow: reconcile failed; will retry',
      );
      schedule.defer(touch, Date.now() + RETRY_MS);
    }
  };

  const withinWindow = (
    touch: DueTouch,
    object: unknown,
    namespace: string,
    fields: object,
  ): boolean => {
    const text =
      workloadAnnotations(object)[ROLLOUT_WINDOW] ??
      namespaces.get(namespace)?.info.annotations[ROLLOUT_WINDOW];
    if (text === undefined) return true;
    const parsed = parseRolloutWindow(text);
    const now = new Date();
    let reopensAt: number;
    let note: string;
    if (!parsed.ok) {
      // Never roll outside what the user meant: hold the change and say why.
      reopensAt = now.getTime() + options.resyncMs;
      note = `confighash: ${parsed.error}; config change held`;
    } else if (isWindowOpen(parsed.window, now)) {
      return true;
    } else {
      reopensAt =
        nextWindowOpening(parsed.window, now)?.getTime() ?? now.getTime() + options.resyncMs;
      note = `confighash: config change held until ${new Date(reopensAt).toISOString()} (window ${parsed.window.text})`;
    }
    metrics.deferred('window');
    schedule.defer(touch, reopensAt);
    const announcement = `${touch.key}\n${note}`;
    if (!announcedDeferrals.has(announcement)) {
      announcedDeferrals.add(announcement);
      logger.info(
        { ...fields, until: new Date(reopensAt).toISOString() },
        'follow: touch deferred',
      );
      const { kind, name } = parseKey(touch.key);
      void api
        .recordEvent(
          {
            kind,
            namespace,
            name,
            uid: uidOf(object),
            type: parsed.ok ? 'Normal' : 'Warning',
            reason: parsed.ok ? 'RolloutDeferred' : 'InvalidRolloutWindow',
            action: 'Defer',
            note: truncate(note),
          },
          signal,
        )
        .catch(() => {});
    }
    return false;
  };

  // --- what to reconcile -----------------------------------------------------

  const workloadsReferencing = async (
    namespace: string,
    matches: (object: unknown, kind: WorkloadKind) => boolean,
  ) => {
    const found: { kind: WorkloadKind; name: string }[] = [];
    for (const kind of HANDLED_KINDS) {
      for (const object of await api.listWorkloads(namespace, kind, signal)) {
        const name = nameOf(object);
        if (name && matches(object, kind)) found.push({ kind, name });
      }
    }
    return found;
  };

  const resyncNamespace = async (namespace: string) => {
    try {
      const workloads = await workloadsReferencing(
        namespace,
        (object, kind) => sourcesOf(object, kind).length > 0,
      );
      for (const { kind, name } of workloads) request(keyOf(kind, namespace, name), RESYNC);
      logger.debug({ namespace, workloads: workloads.length }, 'follow: resync');
    } catch (error) {
      if (!signal.aborted) {
        metrics.reconcileError();
        logger.warn({ namespace, err: (error as Error).message }, 'follow: resync failed');
      }
    }
  };

  // Changes in one namespace are coalesced: one listing serves a burst of events.
  const changed = new Map<string, Set<string>>();
  const draining = new Set<string>();
  const onConfigChange = (namespace: string, resource: ConfigResource, change: ConfigChange) => {
    const source = formatSource(sourceOfResource(resource, change.name));
    const names = changed.get(namespace) ?? new Set<string>();
    changed.set(namespace, names);
    names.add(source);
    if (!draining.has(namespace)) void drain(namespace);
  };
  const drain = async (namespace: string) => {
    draining.add(namespace);
    try {
      while (!signal.aborted) {
        const sources = changed.get(namespace);
        if (!sources || sources.size === 0) return;
        changed.delete(namespace);
        try {
          const hits = await workloadsReferencing(namespace, (object, kind) =>
            sourcesOf(object, kind).some((source) => sources.has(source)),
          );
          for (const { kind, name } of hits) {
            const object = `${kind.kind}/${name}`;
            for (const source of sources) {
              logger.debug({ namespace, workload: object, source }, 'follow: change seen');
              request(keyOf(kind, namespace, name), source);
            }
          }
        } catch (error) {
          if (signal.aborted) return;
          metrics.reconcileError();
          logger.warn(
            { namespace, err: (error as Error).message },
            'follow: listing workloads failed; resyncing later',
          );
          await sleep(RETRY_MS, signal);
          void resyncNamespace(namespace);
        }
      }
    } finally {
      draining.delete(namespace);
    }
  };

  // --- watches ---------------------------------------------------------------

  const watchConfig = async (
    namespace: string,
    resource: ConfigResource,
    nsSignal: AbortSignal,
  ) => {
    let resourceVersion: string | undefined;
    let backoff = 1000;
    while (!nsSignal.aborted) {
      try {
        // The namespace's first resync covers everything before this list.
        resourceVersion ??= await api.listConfigVersion(namespace, resource, nsSignal);
        const end = await api.watchConfig(
          namespace,
          resource,
          resourceVersion,
          (change) => onConfigChange(namespace, resource, change),
          nsSignal,
        );
        backoff = 1000;
        if (nsSignal.aborted) return;
        if (end.expired) {
          // Too old to resume: relist, and resync so that nothing changed meanwhile is lost.
          metrics.watchRestart('expired');
          resourceVersion = await api.listConfigVersion(namespace, resource, nsSignal);
          void resyncNamespace(namespace);
        } else {
          metrics.watchRestart('ended');
          resourceVersion = end.resourceVersion;
        }
      } catch (error) {
        if (nsSignal.aborted) return;
        metrics.watchRestart('error');
        logger.warn(
          { namespace, resource, err: (error as Error).message },
          'follow: watch failed; retrying',
        );
        await sleep(backoff, nsSignal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  };

  const startNamespace = (info: NamespaceInfo) => {
    const known = namespaces.get(info.name);
    if (known) {
      known.info = info;
      return;
    }
    const stop = new AbortController();
    const nsSignal = AbortSignal.any([signal, stop.signal]);
    namespaces.set(info.name, { info, stop });
    logger.info({ namespace: info.name }, 'follow: watching namespace');
    void watchConfig(info.name, 'configmaps', nsSignal);
    void watchConfig(info.name, 'secrets', nsSignal);
    void resyncNamespace(info.name);
  };

  const stopNamespace = (name: string) => {
    const known = namespaces.get(name);
    if (!known) return;
    known.stop.abort();
    namespaces.delete(name);
    logger.info({ namespace: name }, 'follow: stopped watching namespace');
  };

  const watchNamespaces = async () => {
    let backoff = 1000;
    while (!signal.aborted) {
      try {
        const listed = await api.listFollowNamespaces(signal);
        const names = new Set(listed.namespaces.map((info) => info.name));
        for (const name of [...namespaces.keys()]) if (!names.has(name)) stopNamespace(name);
        for (const info of listed.namespaces) startNamespace(info);
        let resourceVersion = listed.resourceVersion;
        for (;;) {
          const end = await api.watchFollowNamespaces(
            resourceVersion,
            (event) =>
              event.type === 'DELETED'
                ? stopNamespace(event.namespace.name)
                : startNamespace(event.namespace),
            signal,
          );
          backoff = 1000;
          if (signal.aborted) return;
          resourceVersion = end.resourceVersion;
          metrics.watchRestart(end.expired ? 'expired' : 'ended');
          if (end.expired) break;
        }
      } catch (error) {
        if (signal.aborted) return;
        metrics.watchRestart('error');
        logger.warn({ err: (error as Error).message }, 'follow: namespace watch failed; retrying');
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  };

  logger.info({ ...options }, 'follow: started');
  void watchNamespaces();
  const resync = setInterval(() => {
    for (const name of namespaces.keys()) void resyncNamespace(name);
  }, options.resyncMs);
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  clearInterval(resync);
  clearTimeout(timer);
  for (const name of [...namespaces.keys()]) stopNamespace(name);
  schedule.clear();
  metrics.pending(0);
  logger.info({}, 'follow: stopped');
}

function sourcesOf(object: unknown, kind: WorkloadKind): string[] {
  const template = podTemplateOf(object, kind);
  return findSources(template?.spec, workloadAnnotations(object)).sources.map(formatSource);
}

function keyOf(kind: WorkloadKind, namespace: string, name: string): string {
  return `${kind.kind}/${namespace}/${name}`;
}

function parseKey(key: string): { kind: WorkloadKind; namespace: string; name: string } {
  const [kindName, namespace, name] = key.split('/') as [string, string, string];
  const kind = HANDLED_KINDS.find((candidate) => candidate.kind === kindName);
  if (!kind) throw new Error(`unknown workload kind in key ${key}`);
  return { kind, namespace, name };
}

function nameOf(object: unknown): string | undefined {
  const name = (object as { metadata?: { name?: unknown } })?.metadata?.name;
  return typeof name === 'string' ? name : undefined;
}

function uidOf(object: unknown): string {
  const uid = (object as { metadata?: { uid?: unknown } })?.metadata?.uid;
  return typeof uid === 'string' ? uid : '';
}

function truncate(note: string): string {
  return note.length <= 1024 ? note : `${note.slice(0, 1023)}…`;
}
