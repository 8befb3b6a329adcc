// The serving certificate as Prometheus sees it, on the webhook's registry: when the one it
// serves now expires (whatever made it: self-managed, cert-manager or a Secret of yours), and
// how often a self-managed check failed. An expiry that comes near while failures grow is a
// renewal that is not happening; the apiserver then stops trusting the webhook and every
// write is admitted unhashed.

import { X509Certificate } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';

export interface CertificateMetrics {
  /** The certificate now served (PEM; the first of a chain is the serving one). */
  serving(cert: Buffer | string): void;
  /** A self-managed check failed: the Secret not brought to a good state, or the caBundle not patched. */
  renewalFailed(): void;
}

export function createCertificateMetrics(registry: Registry): CertificateMetrics {
  const expiry = new Gauge({
    name: 'confighash_certificate_expiry_timestamp_seconds',
    help: 'When the serving certificate this replica serves now expires (notAfter), in seconds since the epoch.',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'confighash_certificate_renewal_failures_total',
    help: 'Self-managed certificate checks that failed (the certificates Secret not read or written, or the caBundle not patched); each is retried within 10 s.',
    registers: [registry],
  });
  // Exported at 0 from the start, so that increase() sees the first failure.
  failures.inc(0);
  return {
    serving(cert) {
      expiry.set(Date.parse(new X509Certificate(cert).validTo) / 1000);
    },
    renewalFailed: () => failures.inc(),
  };
}
