// Scenario 9: what a burst of concurrent 7 MiB reviews (the body limit, docs/design.md
// §4) costs in memory. For each burst size a fresh webhook (API stub), its RSS
// peak (the process and its children, what the container's limit sees, sampled
// every 10 ms) from before the burst until every answer is in, against the
// chart's container memory limit (charts/confighash/values.yaml). Each body comes from
// a loopback address of its own, so that the bound per address (src/server/limits.ts)
// refuses none of them: what is measured is a burst the large share lets through.
// Then a flood of every method and path: 7 MiB bodies sent whole to every route that reads
// none (PUT, PATCH, DELETE, OPTIONS on /mutate, POST and PUT elsewhere, GET /healthz), each
// from an address of its own, which the door refuses unread (src/server/body-limits.ts).

import https from 'node:https';
import { MAX_BODY_BYTES } from '../../src/server/limits.js';
import { sleep } from '../../tools/lib/poll.js';
import { residentMb, sampleTreePeak } from './children.js';
import { type Context, log, NAMESPACE, STANDARD_SOURCES } from './context.js';
import type { Scenario, Target } from './report.js';
import { startConfighash } from './servers.js';
import { round } from './stats.js';
import { admissionReviewBody, benchSources } from './workload.js';

/** resources.limits.memory in charts/confighash/values.yaml (256Mi). */
export const CONTAINER_LIMIT_MIB = 256;
const SETTLE_MS = 2_000;

interface BurstMeasurement {
  readonly bodies: number;
  /** Where they went: POST /mutate when absent. */
  readonly route?: string;
  readonly idleMib: number;
  readonly peakMib: number;
  readonly statuses: Record<string, number>;
  readonly seconds: number;
}

/** The standard review, padded with one annotation to exactly `bytes`. */
function reviewOfSize(bytes: number): Buffer {
  const sources = benchSources(STANDARD_SOURCES);
  const empty = Buffer.byteLength(admissionReviewBody(NAMESPACE, sources, { padding: '' }));
  const body = Buffer.from(
    admissionReviewBody(NAMESPACE, sources, { padding: 'x'.repeat(bytes - empty) }),
  );
  if (body.length !== bytes) throw new Error(`padded review is ${body.length} bytes, not ${bytes}`);
  return body;
}

/** Sends `body` whole with `method`, from `localAddress`: the answer's status, or the error's code. */
function send(
  method: string,
  url: string,
  ca: string,
  body: Buffer,
  localAddress: string,
): Promise<number | string> {
  return new Promise((resolve) => {
    const request = https.request(
      url,
      {
        method,
        ca,
        agent: false,
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', (error: Error & { code?: string }) => resolve(error.code ?? error.message));
    request.end(body);
  });
}

export async function bigBodiesScenario(context: Context, kubeconfig: string): Promise<Scenario> {
  const sizes = context.options.quick ? [4, 16] : [1, 4, 8, 16, 32, 64];
  const body = reviewOfSize(MAX_BODY_BYTES);
  const ca = context.certs.ca;
  const measurements: BurstMeasurement[] = [];
  for (const bodies of sizes) {
    const measured = await measureBurst(context, kubeconfig, `big-bodies-${bodies}`, (url) =>
      Array.from({ length: bodies }, (_, i) =>
        send('POST', `${url}?timeout=5s`, ca, body, `127.0.0.${2 + i}`),
      ),
    );
    log(`  ${bodies} × 7 MiB at once: ${describe(measured)}`);
    measurements.push(measured);
  }
  const flood = await measureBurst(context, kubeconfig, 'big-bodies-every-method', (url) =>
    UNREAD_ROUTES.flatMap(([method, path], route) =>
      Array.from({ length: FLOOD_PER_ROUTE }, (_, i) => {
        const from = `127.0.1.${2 + route * FLOOD_PER_ROUTE + i}`;
        return send(method, `${new URL(url).origin}${path}`, ca, body, from);
      }),
    ),
  );
  const route = 'every other method and path';
  log(
    `  ${flood.bodies} × 7 MiB to ${UNREAD_ROUTES.length} routes that read no body: ${describe(flood)}`,
  );
  measurements.push({ ...flood, route });
  return burstScenario(measurements);
}

/** Where a body is never read: every other method on /mutate, other paths, a probe. */
const UNREAD_ROUTES = [
  ['PUT', '/mutate'],
  ['PATCH', '/mutate'],
  ['DELETE', '/mutate'],
  ['OPTIONS', '/mutate'],
  ['POST', '/other'],
  ['PUT', '/other'],
  ['GET', '/healthz'],
  ['QUERY', '/mutate'],
] as const;
const FLOOD_PER_ROUTE = 8;

/**
 * A fresh webhook's RSS at rest, then its peak (sampled every 10 ms) while the requests that
 * `burst` sends to its /mutate URL are answered, and what they were answered.
 */
async function measureBurst(
  context: Context,
  kubeconfig: string,
  name: string,
  burst: (url: string) => Promise<number | string>[],
): Promise<BurstMeasurement> {
  const webhook = await startConfighash(context, name, kubeconfig);
  try {
    await sleep(SETTLE_MS);
    const idleMib = await residentMb(webhook.pid);
    const sampler = sampleTreePeak(webhook.pid);
    const started = Date.now();
    const answers = await Promise.all(burst(webhook.url));
    const seconds = (Date.now() - started) / 1000;
    await sleep(200);
    const peakMib = sampler.stop();
    const statuses: Record<string, number> = {};
    for (const answer of answers) statuses[answer] = (statuses[answer] ?? 0) + 1;
    return {
      bodies: answers.length,
      idleMib: round(idleMib, 1),
      peakMib: round(peakMib, 1),
      statuses,
      seconds: round(seconds, 2),
    };
  } finally {
    await webhook.stop();
  }
}

const describe = (m: BurstMeasurement) =>
  `idle ${m.idleMib} MiB, peak ${m.peakMib} MiB, ${JSON.stringify(m.statuses)} in ${m.seconds} s`;

function burstScenario(measurements: readonly BurstMeasurement[]): Scenario {
  const table = [
    '| bodies at once | to | idle RSS | peak RSS | answers | seconds |',
    '|--:|---|--:|--:|---|--:|',
    ...measurements.map(
      (m) =>
        `| ${m.bodies} | ${m.route ?? 'POST /mutate'} | ${m.idleMib.toFixed(1)} MiB | ${m.peakMib.toFixed(1)} MiB | ${Object.entries(
          m.statuses,
        )
          .map(([status, count]) => `${count} × ${status}`)
          .join(', ')} | ${m.seconds} |`,
    ),
  ].join('\n');
  const worst = Math.max(...measurements.map((m) => m.peakMib));
  const targets: Target[] = [
    {
      name: 'peak RSS of the largest burst and of the flood of every method, within the container limit',
      measured: `${worst.toFixed(1)} MiB`,
      limit: `≤ ${CONTAINER_LIMIT_MIB} MiB`,
      holds: worst <= CONTAINER_LIMIT_MIB,
    },
  ];
  return {
    id: '9',
    title: 'Memory: a burst of concurrent 7 MiB reviews (API stub)',
    runs: [],
    ratios: { peakMib: worst },
    targets,
    notes: [table],
    details: { measurements },
  };
}
