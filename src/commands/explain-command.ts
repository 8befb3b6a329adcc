// `confighash explain`: why workloads did or did not roll, and whether their next write
// rolls, read from the cluster and printed for people, as JSON or YAML, or as names. The
// workloads are named (TYPE/NAME, TYPE NAME…) or selected (TYPE -l SELECTOR, -A). Every
// failure is a one-line mistake (errors.ts).

import { type ExplainTargets, type NamedWorkload, parseExplainConfig } from '../cli/index.js';
import { createExplainCluster } from '../kube/index.js';
import type { ExplainCluster } from '../plan/index.js';
import { onCluster } from './cli-cluster.js';
import { UsageError, unwrap } from './errors.js';
import { useColor } from './terminal.js';

/** `confighash explain`: exit 0 with every answer, 2 when one (or all) has none. */
export async function explain(argv: readonly string[]): Promise<number> {
  const config = unwrap(parseExplainConfig(argv));
  const plan = await import('../plan/index.js');
  const { answers, found } = await onCluster(
    config.cluster,
    config.client,
    config.namespace,
    async (connection, namespace, signal) => {
      const cluster = createExplainCluster(connection, config.lease);
      const found = await findTargets(cluster, config.targets, namespace, signal);
      const answers = await Promise.all(
        found.map(({ kind, name, namespace: at }) =>
          plan.explainWorkload(cluster, kind, at, name, signal),
        ),
      );
      return { answers, found };
    },
  );
  const explanations = answers.flatMap((answer) => (answer.ok ? [answer.explanation] : []));
  const errors = answers.flatMap((answer) => (answer.ok ? [] : [answer.error]));
  if (explanations.length > 0) {
    const single = config.targets.by === 'name' && config.targets.workloads.length === 1;
    process.stdout.write(
      config.output === 'text'
        ? explanations.map((one) => plan.renderExplanation(one, { color: useColor() })).join('\n')
        : config.output === 'name'
          ? plan.renderExplanationNames(explanations)
          : plan.renderExplanationData(explanations, config.output, single),
    );
  } else if (found.length === 0) {
    // As kubectl get: a selection that picks nothing is no mistake.
    process.stderr.write(`No ${describeSelection(config.targets)} found.\n`);
    if (config.output === 'json' || config.output === 'yaml') {
      process.stdout.write(plan.renderExplanationData([], config.output, false));
    }
    return 0;
  }
  if (errors.length === 1 && explanations.length === 0) throw new UsageError(errors[0]!);
  for (const error of errors) process.stderr.write(`confighash: ${error}\n`);
  return errors.length > 0 ? 2 : 0;
}

interface Target extends NamedWorkload {
  readonly namespace: string;
}

/** The named workloads as they are, or the ones the selection finds. */
async function findTargets(
  cluster: ExplainCluster,
  targets: ExplainTargets,
  namespace: string,
  signal: AbortSignal,
): Promise<Target[]> {
  if (targets.by === 'name') return targets.workloads.map((one) => ({ ...one, namespace }));
  const listed = await cluster.findWorkloads(
    targets.kind,
    targets.allNamespaces ? undefined : namespace,
    targets.selector,
    signal,
  );
  if (listed.status === 'failed') {
    const where = targets.allNamespaces ? 'in any namespace' : `in namespace ${namespace}`;
    throw new UsageError(`cannot list ${targets.kind.resource} ${where}: ${listed.detail}`);
  }
  const items = listed.status === 'found' ? listed.value : [];
  return items.map((item) => ({ kind: targets.kind, ...item }));
}

function describeSelection(targets: ExplainTargets): string {
  if (targets.by === 'name') return 'workload';
  const selector = targets.selector === undefined ? '' : ` matching ${targets.selector}`;
  return `${targets.kind.resource}${selector}`;
}
