// confighash_build_info: which version runs where, for both processes (the webhook's registry
// and the follower's). 1 always; the labels are the facts. A dashboard or an alert joins on it
// to tell replicas of two versions apart during a rollout.

import { Gauge, type Registry } from 'prom-client';

const NAME = 'confighash_build_info';

export function registerBuildInfo(
  registry: Registry,
  version: string,
  node: string = process.versions.node,
): void {
  if (registry.getSingleMetric(NAME)) return;
  new Gauge({
    name: NAME,
    help: 'Always 1: the confighash version (package.json) and the Node.js version this process runs.',
    labelNames: ['version', 'node'] as const,
    registers: [registry],
  }).set({ version, node }, 1);
}
