// `confighash plan`: a preview of what applying the manifests rolls. It reads them (files,
// directories, stdin, `kubectl kustomize`) and the cluster, and prints for people, as JSON
// or YAML, or the names of what rolls. Every failure is a one-line mistake (errors.ts).

import { execFile } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { type ManifestInput, parsePlanConfig } from '../cli/index.js';
import { createExplainCluster } from '../kube/index.js';
import type { Plan } from '../plan/index.js';
import { withConnection } from './cli-cluster.js';
import { loadClusterCredentials, UsageError, unwrap } from './errors.js';
import { useColor } from './terminal.js';

/** `confighash plan`: exit 0 when nothing rolls, 1 when something rolls or cannot be told. */
export async function plan(argv: readonly string[]): Promise<number> {
  const config = unwrap(parsePlanConfig(argv));
  const planning = await import('../plan/index.js');
  const text = await readManifests(config.input);
  const credentials = config.offline
    ? undefined
    : await loadClusterCredentials({ selection: config.cluster });
  const namespace = config.namespace ?? credentials?.current().namespace ?? 'default';
  const parsed = planning.parseManifests(text, namespace, config.kinds);
  if (!parsed.ok) throw new UsageError(parsed.error);
  const options = {
    clientSide: config.clientSide,
    kinds: config.kinds,
    maxFanout: config.maxFanout,
  };
  const result: Plan = credentials
    ? await withConnection(credentials, config.client, (connection, signal) =>
        planning.planChanges(
          parsed.manifests,
          createExplainCluster(connection, config.lease),
          options,
          signal,
        ),
      )
    : // --offline: the manifests alone, nothing to wait for.
      await planning.planChanges(
        parsed.manifests,
        undefined,
        options,
        new AbortController().signal,
      );
  if (config.output === 'text') {
    process.stdout.write(planning.renderPlan(result, { color: useColor() }));
  } else {
    process.stdout.write(
      config.output === 'name'
        ? planning.renderPlanNames(result)
        : planning.renderPlanData(result, config.output),
    );
    for (const problem of result.problems) process.stderr.write(`confighash: ${problem}\n`);
  }
  return planning.planExitCode(result);
}

async function readManifests(input: ManifestInput): Promise<string> {
  if (input.from === 'kustomize') return kustomize(input.dir);
  const texts = await Promise.all(
    input.paths.map((path) =>
      (path === '-' ? readStdin() : readPath(path, input.recursive)).catch(
        (error: NodeJS.ErrnoException) => {
          throw error instanceof UsageError
            ? error
            : new UsageError(`cannot read -f ${path}: ${error.code ?? error.message}`);
        },
      ),
    ),
  );
  return texts.join('\n---\n');
}

/** kubectl's extensions for the files of a -f directory. */
const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** A file, or a directory's manifests in name order (its subdirectories' too with -R). */
async function readPath(path: string, recursive: boolean): Promise<string> {
  if (!(await stat(path)).isDirectory()) return readFile(path, 'utf8');
  const files = await manifestFiles(path, recursive);
  if (files.length === 0) {
    throw new UsageError(
      `-f ${path} has no .yaml, .yml or .json file${recursive ? '' : ' (-R reads its subdirectories too)'}`,
    );
  }
  const texts = await Promise.all(files.map((file) => readFile(file, 'utf8')));
  return texts.join('\n---\n');
}

async function manifestFiles(dir: string, recursive: boolean): Promise<string[]> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  );
  const nested = await Promise.all(
    entries.map(async (entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return recursive ? manifestFiles(path, true) : [];
      return MANIFEST_EXTENSIONS.has(extname(entry.name)) ? [path] : [];
    }),
  );
  return nested.flat();
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
