// `confighash halt SOURCE` and `confighash resume SOURCE [--retry-canary]` (docs/design.md §6
// "Stop and release by hand"): read the source's fan-out record, say what the command does to
// it, and write the control follow mode acts on — the same annotation `kubectl annotate`
// writes. Exit 0 when written, 1 when there is nothing to do, 2 on a mistake.

import { parseFanoutControlConfig } from '../cli/index.js';
import { type ApiConnection, createApiConfigSource, writeFanoutControl } from '../kube/index.js';
import { formatSource, type NamedSource } from '../sources/index.js';
import { askFanout, type FanoutAction, readFanoutRecord } from '../workload/index.js';
import { onCluster } from './cli-cluster.js';
import { UsageError, unwrap } from './errors.js';

export async function fanoutControl(
  command: 'halt' | 'resume',
  argv: readonly string[],
): Promise<number> {
  const config = unwrap(parseFanoutControlConfig(command, argv));
  const said = await onCluster(
    config.cluster,
    config.client,
    config.namespace,
    (connection, namespace, signal) =>
      control(connection, { source: config.source, namespace }, config.action, signal),
  );
  process.stdout.write(`${said.text}\n`);
  return said.written ? 0 : 1;
}

/** Reads, asks, writes; a source changed between the read and the write is read again. */
async function control(
  connection: ApiConnection,
  target: { readonly source: NamedSource; readonly namespace: string },
  action: FanoutAction,
  signal: AbortSignal,
): Promise<{ written: boolean; text: string }> {
  const name = `${formatSource(target.source)} in namespace ${target.namespace}`;
  for (;;) {
    const read = await createApiConfigSource(connection).get(
      target.source.kind,
      target.namespace,
      target.source.name,
      signal,
    );
    if (read.status === 'absent') throw new UsageError(`${name} not found`);
    if (read.status === 'failed') throw new UsageError(`cannot read ${name}: ${read.detail}`);
    const ask = askFanout(action, readFanoutRecord(read.fanout), formatSource(target.source));
    if (!ask.ok) return { written: false, text: ask.said };
    const written = await writeFanoutControl(
      connection,
      { ...target, resourceVersion: read.resourceVersion },
      ask.control,
      signal,
    );
    if (written.status === 'written') return { written: true, text: ask.said };
    if (written.status === 'denied')
      throw new UsageError(`cannot annotate ${name}: ${written.reason}`);
  }
}
