// docs/usage.md lists every metric the two processes export and every Event reason follow mode
// records ("Metrics", "Events"): a new one without its line fails here.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { createCertificateMetrics } from '../../src/certs/certificate-metrics.js';
import { EVENT_REASON } from '../../src/follow/events.js';
import { createFollowMetrics } from '../../src/follow/metrics.js';
import { registerBuildInfo } from '../../src/runtime/index.js';
import { createAdmissionMetrics } from '../../src/server/admission-metrics.js';
import { refusalCounter } from '../../src/server/refusals.js';
import { FANOUT_AWAITS_APPROVAL } from '../../src/workload/fanout-note.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

let usage: string;
beforeAll(async () => {
  usage = await readFile(join(REPO_ROOT, 'docs/usage.md'), 'utf8');
});

const registry = createAdmissionMetrics({ collectProcessMetrics: false }).registry;
createFollowMetrics(registry);
createCertificateMetrics(registry);
registerBuildInfo(registry, '0.0.0');
refusalCounter(registry);
const METRICS = registry.getMetricsAsArray().map((metric) => metric.name);

it('has every metric to list', () => {
  expect(METRICS.length).toBeGreaterThanOrEqual(26);
});

it.each(METRICS)('docs/usage.md "Metrics" lists %s', (name) => {
  const section = usage.slice(usage.indexOf('## Metrics'), usage.indexOf('## Events'));
  expect(section).toContain(`| \`${name}\` |`);
});

it.each([...Object.values(EVENT_REASON), FANOUT_AWAITS_APPROVAL])(
  'docs/usage.md "Events" lists the reason %s',
  (reason) => {
    const section = usage.slice(usage.indexOf('## Events'), usage.indexOf('## Alerts'));
    expect(section).toContain(`| \`${reason}\` |`);
  },
);
