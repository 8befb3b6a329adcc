// What the `scale` scenario reads from kube-apiserver's /metrics, as pure
// functions over the text: requests by verb and resource (apiserver_request_total),
// watches held (apiserver_longrunning_requests), the differences between two
// scrapes, and the one burst of requests a resync makes in a series of scrapes.

/** `VERB resource[/subresource]` → count; non-resource requests (/metrics, discovery) left out. */
export type Counts = Readonly<Record<string, number>>;

interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Every sample of the metric `name` in a Prometheus text exposition. */
export function samplesOf(text: string, name: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    if (close < 0) throw new Error(`malformed metric line: ${line.slice(0, 200)}`);
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(' ')[0],
    );
    if (!Number.isFinite(value)) throw new Error(`malformed metric value: ${line.slice(0, 200)}`);
    const labels: Record<string, string> = {};
    for (const match of line.slice(name.length + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[match[1]!] = match[2]!;
    }
    samples.push({ labels, value });
  }
  return samples;
}

const keyOf = (labels: Readonly<Record<string, string>>) =>
  `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;

function sumBy(samples: readonly Sample[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { labels, value } of samples) {
    if (!labels.resource) continue;
    const key = keyOf(labels);
    counts[key] = (counts[key] ?? 0) + value;
  }
  return counts;
}

/** Requests served so far, by verb and resource (all codes, scopes and versions together). */
export const requestCounts = (text: string): Counts =>
  sumBy(samplesOf(text, 'apiserver_request_total'));

/** Watches open now, by resource. */
export function watchCounts(text: string): Counts {
  const watches = samplesOf(text, 'apiserver_longrunning_requests').filter(
    (s) => s.labels.verb === 'WATCH',
  );
  return Object.fromEntries(
    Object.entries(sumBy(watches)).map(([key, n]) => [key.slice('WATCH '.length), n]),
  );
}

/** after − before, only the keys that moved. */
export function deltaOf(before: Counts, after: Counts): Counts {
  const delta: Record<string, number> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const moved = (after[key] ?? 0) - (before[key] ?? 0);
    if (moved !== 0) delta[key] = moved;
  }
  return sortedCounts(delta);
}

export const totalOf = (counts: Counts, keep: (key: string) => boolean = () => true) =>
  Object.entries(counts).reduce((n, [key, value]) => (keep(key) ? n + value : n), 0);

/** The count of one verb over every resource. */
export const verbTotal = (counts: Counts, verb: string) =>
  totalOf(counts, (key) => key.startsWith(`${verb} `));

/** Largest first, then by name: the order the tables print. */
export function sortedCounts(counts: Counts): Counts {
  return Object.fromEntries(
    Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)),
  );
}

/** `12 GET deployments, 3 LIST configmaps`; `none` when empty. */
export function formatCounts(counts: Counts, keep: (key: string) => boolean = () => true): string {
  const parts = Object.entries(counts)
    .filter(([key]) => keep(key))
    .map(([key, n]) => `${n.toLocaleString('en-US')} ${key}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

export interface Scrape {
  readonly atMs: number;
  readonly counts: Counts;
}

/**
 * The first burst of requests counted by `counts` in a series of scrapes: from the first
 * interval in which one moved to the first run of `gap` still intervals after it. Empty when
 * nothing moved, and `complete: false` when the series ends inside the burst.
 */
export function firstBurst(
  scrapes: readonly Scrape[],
  counted: (key: string) => boolean,
  gap: number,
): { readonly delta: Counts; readonly startMs?: number; readonly complete: boolean } {
  const moved = (i: number) =>
    totalOf(deltaOf(scrapes[i - 1]!.counts, scrapes[i]!.counts), counted) > 0;
  let start = -1;
  let still = 0;
  for (let i = 1; i < scrapes.length; i++) {
    if (start < 0) {
      if (moved(i)) start = i - 1;
      continue;
    }
    still = moved(i) ? 0 : still + 1;
    if (still >= gap) {
      const end = i - still;
      return {
        delta: onlyCounted(deltaOf(scrapes[start]!.counts, scrapes[end]!.counts), counted),
        startMs: scrapes[start]!.atMs,
        complete: true,
      };
    }
  }
  if (start < 0) return { delta: {}, complete: true };
  return {
    delta: onlyCounted(
      deltaOf(scrapes[start]!.counts, scrapes[scrapes.length - 1]!.counts),
      counted,
    ),
    startMs: scrapes[start]!.atMs,
    complete: false,
  };
}

const onlyCounted = (counts: Counts, counted: (key: string) => boolean): Counts =>
  Object.fromEntries(Object.entries(counts).filter(([key]) => counted(key)));

/**
 * How long a fan-out of `workloads` touches takes to drain at `rate` a second after `burst`
 * at once, the debounce first: the extrapolation of a measured drain to other sizes.
 */
export function drainSeconds(
  workloads: number,
  limits: { readonly rate: number; readonly burst: number; readonly debounceS: number },
): number {
  return limits.debounceS + Math.max(0, workloads - limits.burst) / limits.rate;
}

/**
 * True when a process used at most `fraction` of one core in the last `windowMs` of a series
 * of [ms, CPU µs] samples (oldest first), the series covering at least that window.
 */
export function quietFor(
  samples: readonly (readonly [number, number])[],
  windowMs: number,
  fraction: number,
): boolean {
  const last = samples[samples.length - 1];
  if (!last) return false;
  const from = [...samples].reverse().find(([at]) => last[0] - at >= windowMs);
  if (!from) return false;
  return (last[1] - from[1]) / 1000 <= fraction * (last[0] - from[0]);
}
