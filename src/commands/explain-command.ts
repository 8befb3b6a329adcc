// `confighash explain KIND/NAME`: why a workload did or did not roll, and whether its next
// write rolls, read from the cluster and printed for people or as JSON or YAML. Every
// failure is a one-line mistake (errors.ts).

import { parseExplainConfig } from '../cli/index.js';
import { createExplainCluster } from '../kube/index.js';
import { onCluster } from './cli-cluster.js';
import { UsageError, unwrap } from './errors.js';
import { useColor } from './terminal.js';

/** `confighash explain KIND/NAME`: exit 0 with the answer, 2 when there is none. */
export async function explain(argv: readonly string[]): Promise<number> {
  const config = unwrap(parseExplainConfig(argv));
  const { explainWorkload, renderExplanation, renderExplanationData } = await import(
    '../plan/index.js'
  );
  const result = await onCluster(
    config.cluster,
    config.namespace,
    (connection, namespace, signal) =>
      explainWorkload(
        createExplainCluster(connection),
        config.kind,
        namespace,
        config.name,
        signal,
      ),
  );
  if (!result.ok) throw new UsageError(result.error);
  process.stdout.write(
    config.output === 'text'
      ? renderExplanation(result.explanation, { color: useColor() })
      : renderExplanationData(result.explanation, config.output),
  );
  return 0;
}
