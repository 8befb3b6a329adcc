// The metrics both processes add besides their use cases' (docs/usage.md "Metrics"): which
// version runs, and when the certificate served expires.

import { X509Certificate } from 'node:crypto';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createCertificateMetrics } from '../../src/certs/certificate-metrics.js';
import { generateCertificateAuthority } from '../../src/certs/generate.js';
import { registerBuildInfo } from '../../src/runtime/index.js';

async function value(registry: Registry, name: string) {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values;
}

describe('confighash_build_info', () => {
  it('is 1, labelled with the version and the Node.js version', async () => {
    const registry = new Registry();
    registerBuildInfo(registry, '1.2.3', '24.1.0');
    expect(await value(registry, 'confighash_build_info')).toEqual([
      { value: 1, labels: { version: '1.2.3', node: '24.1.0' } },
    ]);
  });

  it('defaults to the Node.js version that runs it, and registers once per registry', async () => {
    const registry = new Registry();
    registerBuildInfo(registry, '1.2.3');
    registerBuildInfo(registry, '1.2.3');
    expect(await value(registry, 'confighash_build_info')).toEqual([
      { value: 1, labels: { version: '1.2.3', node: process.versions.node } },
    ]);
  });
});

describe('certificate metrics', () => {
  it('the expiry is the served certificate’s notAfter, replaced by a reload', async () => {
    const registry = new Registry();
    const metrics = createCertificateMetrics(registry);
    const now = new Date('2030-01-01T00:00:00Z');
    const [short, long] = await Promise.all([
      generateCertificateAuthority('short', 1, now),
      generateCertificateAuthority('long', 30, now),
    ]);
    const notAfter = (pem: string) => Date.parse(new X509Certificate(pem).validTo) / 1000;
    metrics.serving(short.cert);
    expect(await value(registry, 'confighash_certificate_expiry_timestamp_seconds')).toEqual([
      { value: notAfter(short.cert), labels: {} },
    ]);
    metrics.serving(Buffer.from(long.cert));
    const reloaded = (await value(registry, 'confighash_certificate_expiry_timestamp_seconds'))![0]!
      .value;
    expect(reloaded).toBe(notAfter(long.cert));
    expect(reloaded - now.getTime() / 1000).toBeGreaterThan(29 * 86_400);
  });

  it('renewal failures start at 0 and count each failed check', async () => {
    const registry = new Registry();
    const metrics = createCertificateMetrics(registry);
    const failures = () => value(registry, 'confighash_certificate_renewal_failures_total');
    expect(await failures()).toEqual([{ value: 0, labels: {} }]);
    metrics.renewalFailed();
    metrics.renewalFailed();
    expect(await failures()).toEqual([{ value: 2, labels: {} }]);
  });
});
