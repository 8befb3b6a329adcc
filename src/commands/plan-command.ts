// `confighash plan`: a preview of what applying the manifests rolls. It reads them (files,
// stdin, `kubectl kustomize`) and the cluster, and prints for people or as JSON or YAML.
// Every failure is a one-line mistake (errors.ts).

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { type ManifestInput, parsePlanConfig } from '../cli/index.js';
import { checkReachable, connectToCluster, createExplainCluster } from '../kube/index.js';
import { withDeadline } from '../runtime/deadline.js';
import { CLI_TIMEOUT_MS } from './cli-cluster.js';
import { loadClusterCredentials, UsageError, unwrap } from './errors.js';
import { useColor } from './terminal.js';

/** `confighash plan`: exit 0 when nothing rolls, 1 when something rolls or cannot be told. */
export async function plan(argv: readonly string[]): Promise<number> {
  const config = unwrap(parsePlanConfig(argv));
  const { parseManifests, planChanges, planExitCode, renderPlan, renderPlanData } = await import(
    '../plan/index.js'
  );
  const text = await readManifests(config.input);
  const credentials = config.offline
    ? undefined
    : await loadClusterCredentials({ selection: config.cluster });
  const namespace = config.namespace ?? credentials?.current().namespace ?? 'default';
  const parsed = parseManifests(text, namespace, config.kinds);
  if (!parsed.ok) throw new UsageError(parsed.error);
  const connection = credentials && connectToCluster(credentials);
  try {
    if (connection) await checkReachable(connection);
    const cluster = connection && createExplainCluster(connection);
    const result = await withDeadline(undefined, CLI_TIMEOUT_MS, (signal) =>
      planChanges(
        parsed.manifests,
        cluster,
        { clientSide: config.clientSide, kinds: config.kinds, maxFanout: config.maxFanout },
        signal,
      ),
    );
    if (config.output !== 'text') {
      process.stdout.write(renderPlanData(result, config.output));
      for (const problem of result.problems) process.stderr.write(`confighash: ${problem}\n`);
    } else {
      process.stdout.write(renderPlan(result, { color: useColor() }));
    }
    return planExitCode(result);
  } finally {
    connection?.close();
  }
}

async function readManifests(input: ManifestInput): Promise<string> {
  if (input.from === 'kustomize') return kustomize(input.dir);
  const texts = await Promise.all(
    input.paths.map((path) =>
      (path === '-' ? readStdin() : readFile(path, 'utf8')).catch(
        (error: NodeJS.ErrnoException) => {
          throw new UsageError(`cannot read -f ${path}: ${error.code ?? error.message}`);
        },
      ),
    ),
  );
  return texts.join('\n---\n');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function kustomize(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'kubectl',
      ['kustomize', dir],
      { maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const reason = (stderr.trim().split('\n').pop() || error.message).trim();
        reject(new UsageError(`kubectl kustomize ${dir} failed: ${reason}`));
      },
    );
  });
}
