// docs/design.md §10, "slow or huge bodies": while a flood of trickled large bodies fills
// the webhook's body budget (test/support/flood.ts, from loopback addresses that are not
// the apiserver's), Deployments applied through the apiserver are all hashed, and the
// apiserver's own count of reviews it let through unanswered (failurePolicy Ignore) does
// not move. The webhook's RSS under the flood is logged, never asserted.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  LARGE_BODY_BYTES_IN_FLIGHT,
  MAX_BODY_BYTES,
  REQUEST_ARRIVAL_MS,
  SMALL_BODY_BYTES,
  SMALL_BODY_BYTES_IN_FLIGHT,
} from '../../src/server/limits.js';
import { HASH } from '../../src/workload/annotations.js';
import { configMap, e2eFile, namespace, secret, workload, yamlDocuments } from '../support/e2e.js';
import { floodRounds, startFlood } from '../support/flood.js';
import { webhookCounters } from '../support/node.js';

const NS = 'flood';
const DEPLOYMENTS = 20;
/** Past the first cut (the arrival limit) and the reconnections after it. */
const FLOOD_MS = REQUEST_ARRIVAL_MS + 4_000;

const file = e2eFile([], {
  async setup({ e2e }) {
    await e2e.k(
      ['apply', '-f', '-'],
      yamlDocuments(
        namespace(NS, 'true'),
        configMap(NS, 'app-config', { 'app.yaml': 'port: 8080' }),
        secret(NS, 'app-secret', { password: 'flooded' }),
      ),
    );
  },
});

/** A process's resident set now, in MiB, from /proc. */
async function residentMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024;
}

/** The largest resident set of `pid` seen every 100 ms until `stop()`. */
function sampleResident(pid: number): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    void residentMiB(pid).then((mib) => {
      peak = Math.max(peak, mib);
    });
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/** Deployment `name`, reading the namespace's one ConfigMap and Secret. */
function deployment(name: string): object {
  return workload(NS, name, {
    podSpec: {
      volumes: [{ name: 'config', configMap: { name: 'app-config' } }],
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          envFrom: [{ secretRef: { name: 'app-secret' } }],
          volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
        },
      ],
    },
  });
}

describe('a flood of trickled large bodies at the webhook port', () => {
  it(
    `${DEPLOYMENTS} Deployments applied meanwhile are all hashed, and none fails open`,
    async () => {
      const { webhook } = file.e2e;
      const pid = webhook.process.child.pid;
      if (pid === undefined) throw new Error('the webhook process has no pid');
      const before = await webhookCounters(file.e2e);
      const idle = await residentMiB(pid);
      const sampler = sampleResident(pid);
      const rounds = floodRounds(
        [LARGE_BODY_BYTES_IN_FLIGHT, SMALL_BODY_BYTES_IN_FLIGHT],
        MAX_BODY_BYTES,
        SMALL_BODY_BYTES,
      );
      const flood = startFlood(
        { port: webhook.port, ca: await readFile(join(webhook.certsDir, 'ca.crt')) },
        rounds,
      );
      const started = Date.now();
      await flood.started;
      const applies: Promise<{ name: string; ms: number }>[] = [];
      for (let i = 0; i < DEPLOYMENTS; i++) {
        const name = `app-${i}`;
        const applied = Date.now();
        applies.push(
          file.e2e
            .k(['apply', '-f', '-'], yamlDocuments(deployment(name)))
            .then(() => ({ name, ms: Date.now() - applied })),
        );
        await new Promise((resolve) => setTimeout(resolve, FLOOD_MS / DEPLOYMENTS));
      }
      const done = await Promise.all(applies);
      const peak = sampler.stop();
      const report = flood.stop();
      const after = await webhookCounters(file.e2e);
      console.info(
        `flood: ${report.connections} connections over ${Date.now() - started} ms (ends ${JSON.stringify(report.ends)}); ` +
          `slowest apply ${Math.max(...done.map((d) => d.ms))} ms; webhook RSS ${idle.toFixed(1)} MiB before, peak ${peak.toFixed(1)} MiB under the flood`,
      );

      const hashes = await Promise.all(
        done.map(async ({ name }) => ({
          name,
          hash: (await file.api.templateAnnotations(NS, 'deployment', name))[HASH],
        })),
      );
      expect(hashes.filter(({ hash }) => hash === undefined)).toEqual([]);
      expect(after.failOpen - before.failOpen).toBe(0);
      expect(after.requests - before.requests).toBeGreaterThanOrEqual(DEPLOYMENTS);
      // The flood did run past a cut: every connection was cut off and came back.
      expect(report.connections).toBeGreaterThan(rounds.flat().length);
    },
    FLOOD_MS + 60_000,
  );
});
