// What the door turns away, counted by reason (docs/design.md §4 "Bounds"): one counter per
// metrics registry, shared by every port that registry's process serves.

import { Counter, type Registry } from 'prom-client';

/** Why an arrival was turned away (the label of confighash_requests_refused_total). */
export type RefusalReason =
  | 'connections'
  | 'connections-per-address'
  | 'tls-handshake'
  | 'headers-too-large'
  | 'arrival-timeout'
  | 'body-not-read'
  | 'body-too-large'
  | 'body-address-bound'
  | 'body-budget';

export type CountRefusal = (reason: RefusalReason) => void;

const counters = new WeakMap<Registry, CountRefusal>();

/** The counter of refusals on `registry`: one per registry, shared by the ports it serves. */
export function refusalCounter(registry: Registry): CountRefusal {
  const known = counters.get(registry);
  if (known) return known;
  const refused = new Counter({
    name: 'confighash_requests_refused_total',
    help: 'Connections and requests turned away at the door, by reason: too many connections (in total, from one address), a TLS handshake that failed or never ended, headers too large, a request that did not arrive in time, a body on a route that reads none, too large, past its address bound or the budget.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const count: CountRefusal = (reason) => refused.labels({ reason }).inc();
  counters.set(registry, count);
  return count;
}
