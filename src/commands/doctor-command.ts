// `confighash doctor [-n NAMESPACE]`: each check a line, ok or FAIL with what to do
// (src/plan/doctor.ts). Exit 0 when every check is ok, 1 otherwise, 2 on a mistake or an
// unreachable cluster.

import { randomBytes } from 'node:crypto';
import { parseDoctorConfig } from '../cli/index.js';
import { createExplainCluster } from '../kube/index.js';
import { onCluster } from './cli-cluster.js';
import { unwrap } from './errors.js';

export async function doctor(argv: readonly string[]): Promise<number> {
  const config = unwrap(parseDoctorConfig(argv));
  const { diagnose } = await import('../plan/index.js');
  const checks = await onCluster(
    config.cluster,
    config.client,
    config.namespace,
    (connection, namespace, signal) =>
      diagnose(
        createExplainCluster(connection, config.lease),
        {
          namespace,
          webhookConfiguration: config.webhookConfiguration,
          probeName: `confighash-doctor-${randomBytes(4).toString('hex')}`,
        },
        signal,
      ),
  );
  for (const check of checks) {
    const todo = check.todo === undefined ? '' : ` — ${check.todo}`;
    process.stdout.write(`${check.state.padEnd(4)}  ${check.what}${todo}\n`);
  }
  return checks.every((check) => check.state === 'ok') ? 0 : 1;
}
