// The two watch loops of follow mode: ConfigMaps/Secrets of one namespace, and
// the follow namespaces themselves. Each lists, watches from that
// resourceVersion, resumes when the server ends the watch, relists on 410
// (too old), and backs off on errors.

import type { FollowLogger } from './logger.js';
import type { FollowMetrics } from './metrics.js';
import type {
  ConfigChange,
  ConfigResource,
  FollowApi,
  NamespaceEvent,
  NamespaceInfo,
  WatchEnd,
} from './ports.js';
import { sleep } from './sleep.js';

const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

export interface WatchDependencies {
  readonly api: FollowApi;
  readonly metrics: Pick<FollowMetrics, 'watchRestart'>;
  readonly logger: FollowLogger;
}

/**
 * Watches one namespace's ConfigMaps or Secrets until `signal` aborts.
 * `onRelisted` runs after a 410 relist: changes in between were not seen.
 */
export async function watchConfig(
  { api, metrics, logger }: WatchDependencies,
  namespace: string,
  resource: ConfigResource,
  handlers: { onChange(change: ConfigChange): void; onRelisted(): void },
  signal: AbortSignal,
): Promise<void> {
  // The namespace's first resync covers everything before the first list.
  let resourceVersion: string | undefined;
  await retryWithBackoff(
    signal,
    async (healthy) => {
      resourceVersion ??= await api.listConfigVersion(namespace, resource, signal);
      const end = await api.watchConfig(
        namespace,
        resource,
        resourceVersion,
        handlers.onChange,
        signal,
      );
      healthy();
      if (signal.aborted) return;
      metrics.watchRestart(restartReason(end));
      if (!end.expired) {
        resourceVersion = end.resourceVersion;
        return;
      }
      resourceVersion = await api.listConfigVersion(namespace, resource, signal);
      handlers.onRelisted();
    },
    (error) => {
      metrics.watchRestart('error');
      logger.warn({ namespace, resource, err: error.message }, 'follow: watch failed; retrying');
    },
  );
}

/** Lists and watches the follow namespaces until `signal` aborts; relists after a 410. */
export async function watchNamespaces(
  { api, metrics, logger }: WatchDependencies,
  handlers: {
    onListed(namespaces: readonly NamespaceInfo[]): void;
    onEvent(event: NamespaceEvent): void;
  },
  signal: AbortSignal,
): Promise<void> {
  await retryWithBackoff(
    signal,
    async (healthy) => {
      const listed = await api.listFollowNamespaces(signal);
      handlers.onListed(listed.namespaces);
      let resourceVersion = listed.resourceVersion;
      for (;;) {
        const end = await api.watchFollowNamespaces(resourceVersion, handlers.onEvent, signal);
        healthy();
        if (signal.aborted) return;
        resourceVersion = end.resourceVersion;
        metrics.watchRestart(restartReason(end));
        if (end.expired) return; // Relist.
      }
    },
    (error) => {
      metrics.watchRestart('error');
      logger.warn({ err: error.message }, 'follow: namespace watch failed; retrying');
    },
  );
}

function restartReason(end: WatchEnd): 'expired' | 'silent' | 'ended' {
  if (end.expired) return 'expired';
  return end.silent ? 'silent' : 'ended';
}

/** Runs `step` again and again until `signal` aborts; after a failure, waits longer each time. */
async function retryWithBackoff(
  signal: AbortSignal,
  step: (healthy: () => void) => Promise<void>,
  onError: (error: Error) => void,
): Promise<void> {
  let backoff = INITIAL_BACKOFF_MS;
  const healthy = () => {
    backoff = INITIAL_BACKOFF_MS;
  };
  while (!signal.aborted) {
    try {
      await step(healthy);
    } catch (error) {
      if (signal.aborted) return;
      onError(error as Error);
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}
