// The servers under load: the floors and confighash (compiled, as a user starts
// it), and what confighash's metrics say of its own reviews.

import { join } from 'node:path';
import { freePort } from '../../tools/cluster/ports.js';
import { forkHelper, type Helper, startWebhook, type Webhook } from './children.js';
import { memoryLimit } from './container.js';
import type { Context } from './context.js';

/** A floor server (bench/procs/floor.ts) and its process. */
export interface Floor {
  readonly url: string;
  readonly helper: Helper;
}

export async function startFloor(
  context: Context,
  name: string,
  api?: { url: string; ca?: string; cert?: string; key?: string; http2?: boolean },
  cpus?: string,
): Promise<Floor> {
  const profile = context.options.profile
    ? ['--cpu-prof', `--cpu-prof-dir=${context.resultsDir}`, `--cpu-prof-name=${name}.cpuprofile`]
    : [];
  // As confighash runs: the image's Node flags and the serving container's allocator
  // variables, in its memory limit.
  const helper = forkHelper('floor', join(context.work, `${name}.log`), {
    execArgv: [...context.serve.nodeFlags, ...profile],
    env: context.serve.env,
    cpus,
    memoryLimit: await memoryLimit(name, context.serve.memoryLimitBytes),
  });
  context.helpers.push(helper);
  const { port } = await helper.call<{ port: number }>('listen', {
    options: { tls: { cert: context.certs.cert, key: context.certs.key }, api },
  });
  return { url: `https://127.0.0.1:${port}/mutate`, helper };
}

export async function startConfighash(
  context: Context,
  name: string,
  kubeconfig: string,
  mainJs?: string,
  cpus?: string,
): Promise<Webhook> {
  const webhook = await startWebhook({
    ...(mainJs ? { mainJs } : {}),
    cpus,
    dir: context.work,
    name,
    kubeconfig,
    port: await freePort(),
    certs: context.certs,
    hashKeyFile: context.hashKeyFile,
    runtime: context.serve,
    ...(context.options.profile ? { profileDir: context.resultsDir } : {}),
  });
  context.webhooks.push(webhook);
  return webhook;
}

/** Every review of the bench workload must be answered with a hash (a patch); count the rest. */
export function wrongOutcomes(webhook: Webhook, expected: string): () => Promise<number> {
  return async () => {
    const counters = await webhook.metrics();
    let wrong = 0;
    for (const [name, value] of Object.entries(counters)) {
      if (
        name.startsWith('confighash_admission_requests_total{') &&
        !name.includes(`"${expected}"`)
      ) {
        wrong += value;
      }
      if (name.startsWith('confighash_lookups_total{') && !name.includes('result="found"')) {
        wrong += value;
      }
    }
    return wrong;
  };
}

/** Connections over the webhook's whole life, warm-ups included (the table counts measured windows). */
export async function lifetimeNote(webhook: Webhook, apiHost: string): Promise<string> {
  const counts = await webhook.connections();
  const opened = counts[apiHost] ?? 0;
  const h2 = counts[`${apiHost} h2`] ?? 0;
  let reviews = 0;
  for (const [name, value] of Object.entries(await webhook.metrics())) {
    if (name.startsWith('confighash_admission_requests_total{')) reviews += value;
  }
  return `Over its whole life, warm-ups included, the webhook opened ${opened} connections to the API (${apiHost}: HTTP/2 sessions and agent sockets alike, ${h2} of them HTTP/2) for ${reviews.toLocaleString('en-US')} reviews (${((opened / Math.max(1, reviews)) * 1000).toFixed(2)} per 1,000); the agent's pool is capped at 64 sockets.`;
}
