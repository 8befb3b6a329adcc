// The one metric admission and follow mode both report (docs/security.md "Rotate the
// hash key"): hashes judged current that a previous hash key made. While it grows, some
// workload still carries such a hash and the previous key cannot be dropped without
// rolling it. One name, a label per component; one counter per registry, whichever
// component registers it first (a test may register both on one).

import { Counter, type Registry } from 'prom-client';

const NAME = 'confighash_previous_key_hashes_total';

type HashComponent = 'admission' | 'follow';

/** The function that counts one such judgement of `component` on `registry`. */
export function countPreviousKeyHashes(registry: Registry, component: HashComponent): () => void {
  const counter =
    (registry.getSingleMetric(NAME) as Counter<'component'> | undefined) ??
    new Counter({
      name: NAME,
      help: 'Hashes judged current that a previous hash key made (admission: writes, dry runs aside; follow: evaluations, every followed workload once after taking the lead). 0 once a restarted follower has evaluated everything: no followed workload needs a previous key.',
      labelNames: ['component'] as const,
      registers: [registry],
    });
  const child = counter.labels({ component });
  // Exported at 0 from the start: "none" is then a value to read, not a missing series.
  child.inc(0);
  return () => child.inc();
}
