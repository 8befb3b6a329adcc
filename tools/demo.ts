// `npm run demo`: a narrated tour on a real local control plane. Every step runs
// the kubectl command it prints, and checks what it claims, so the demo fails
// loudly if confighash does not do what it says. `--keep` leaves it running.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Kubectl, kubectlFor } from './cluster/kubectl.js';
import { startLocalCluster } from './cluster/main.js';

const EXAMPLES = fileURLToPath(new URL('../examples/shop/', import.meta.url));
const keep = process.argv.includes('--keep');
const bold = (text: string) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);
const say = (text: string) => process.stdout.write(`\n${bold(`▶ ${text}`)}\n`);

async function main(): Promise<void> {
  say(
    'Starting a local control plane (etcd, kube-apiserver, kube-controller-manager) and the webhook',
  );
  process.stdout.write('  (the first run builds Kubernetes from Go modules: many minutes)\n');
  const cluster = await startLocalCluster((line) => process.stdout.write(`  ${line}\n`));
  const kubectl = kubectlFor(cluster.kubeconfig);
  const run = narrate(kubectl);
  try {
    say(
      'Opt the namespace `shop` in with a label, and apply the app: ConfigMaps, a Secret, a Deployment',
    );
    await run(['apply', '-f', `${EXAMPLES}namespace.yaml`]);
    await run(['apply', '--server-side', '-n', 'shop', '-f', `${EXAMPLES}app.yaml`]);

    say(
      'The pod template now carries a keyed hash of the referenced config, and the list of sources',
    );
    const first = await annotations(kubectl, 'shop', 'web');
    await run([
      'get',
      'deployment',
      'web',
      '-n',
      'shop',
      '-o',
      'jsonpath={.spec.template.metadata.annotations}',
    ]);
    check(first.hash !== undefined, 'the Deployment template has confighash.dev/hash');
    await waitForRevision(kubectl, 'shop', 'web', 1);
    await run(['get', 'replicasets', '-n', 'shop', '-l', 'app=web']);

    say(
      'Change a key nobody reads (`unrelated-team-setting` in shared-flags) and re-apply: nothing rolls',
    );
    await run(
      ['apply', '--server-side', '-n', 'shop', '-f', '-'],
      (await readFile(`${EXAMPLES}app.yaml`, 'utf8')).replace('"42"', '"43"'),
    );
    check(
      (await annotations(kubectl, 'shop', 'web')).hash === first.hash,
      'the hash did not change',
    );
    await waitForRevision(kubectl, 'shop', 'web', 1);

    say('Change the app config (workers: 4 → 8) and re-apply the same files: one new ReplicaSet');
    await run(
      ['apply', '--server-side', '-n', 'shop', '-f', '-'],
      (await readFile(`${EXAMPLES}app.yaml`, 'utf8')).replace('workers: 4', 'workers: 8'),
    );
    await waitForRevision(kubectl, 'shop', 'web', 2);
    await run(['get', 'replicasets', '-n', 'shop', '-l', 'app=web']);
    check((await annotations(kubectl, 'shop', 'web')).hash !== first.hash, 'the hash changed');
    process.stdout.write(
      '  (no kubelet here, so pods stay Pending: the new ReplicaSet is the rollout)\n',
    );

    say(
      'Apply a Deployment whose ConfigMap does not exist yet: allowed, with a warning from confighash',
    );
    const broken = await run([
      'apply',
      '--server-side',
      '-n',
      'shop',
      '-f',
      `${EXAMPLES}broken.yaml`,
    ]);
    check(
      broken.includes('Warning: confighash: ConfigMap reports-config not found'),
      'kubectl printed the warning',
    );

    say('A namespace without the label is left alone');
    await run(['create', 'namespace', 'plain']);
    await run(['apply', '--server-side', '-n', 'plain', '-f', `${EXAMPLES}app.yaml`]);
    const plain = await annotations(kubectl, 'plain', 'web');
    check(plain.hash === undefined, 'no hash in the unlabelled namespace');
    await run([
      'get',
      'deployment',
      'web',
      '-n',
      'plain',
      '-o',
      'jsonpath={.spec.template.metadata.annotations}',
    ]);

    say(
      'Follow mode: a namespace labelled `follow`, the app applied client-side as most people do',
    );
    await run(['apply', '-f', `${EXAMPLES}follow-namespace.yaml`]);
    await run(['apply', '-n', 'payments', '-f', `${EXAMPLES}app.yaml`]);
    await waitForRevision(kubectl, 'payments', 'web', 1);

    say(
      'Rotate the Secret out of band (as External Secrets or `kubectl edit` would): no write of the Deployment',
    );
    const rotated = await run(
      [
        'create',
        'secret',
        'generic',
        'web-secret',
        '-n',
        'payments',
        '--from-literal=DATABASE_PASSWORD=rotated',
      ],
      undefined,
      ['--dry-run=client', '-o', 'yaml'],
    );
    await run(['replace', '-f', '-'], rotated);
    process.stdout.write(
      '  (confighash waits 2 s for more changes — 10 s by default — then touches the Deployment)\n',
    );
    await waitForRevision(kubectl, 'payments', 'web', 2);
    await run(['get', 'replicasets', '-n', 'payments', '-l', 'app=web']);
    await run([
      'get',
      'events.events.k8s.io',
      '-n',
      'payments',
      '--field-selector',
      'reason=ConfigChanged',
      '-o',
      'custom-columns=OBJECT:.regarding.name,REASON:.reason,NOTE:.note',
    ]);

    say('Done: config changed → template changed → rollout; config unchanged → nothing happens.');
    if (keep) {
      process.stdout.write(
        `\nStill running (Ctrl-C to stop):\n  export KUBECONFIG=${cluster.kubeconfig}\n`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
  } finally {
    await cluster.stop();
  }
}

function narrate(kubectl: Kubectl) {
  /** `quiet` arguments run but are not echoed, and their output is returned for a pipe. */
  return async (
    args: readonly string[],
    input?: string,
    quiet: readonly string[] = [],
  ): Promise<string> => {
    const shown = args.map((arg) =>
      arg.startsWith(EXAMPLES) ? `examples/shop/${arg.slice(EXAMPLES.length)}` : arg,
    );
    const pipe = quiet.length > 0 ? ` ${quiet.join(' ')} |` : '';
    process.stdout.write(`$ kubectl ${shown.join(' ')}${pipe}${input ? ' <<EOF …' : ''}\n`);
    const result = await kubectl([...args, ...quiet], input);
    if (result.code !== 0)
      throw new Error(`kubectl ${shown.join(' ')} failed: ${result.stderr.trim()}`);
    if (quiet.length > 0) return result.stdout;
    const output = `${result.stdout}${result.stderr}`.trimEnd();
    if (output) process.stdout.write(`${output.replace(/^/gm, '  ')}\n`);
    return output;
  };
}

async function annotations(kubectl: Kubectl, ns: string, name: string) {
  const result = await kubectl(['get', 'deployment', name, '-n', ns, '-o', 'json']);
  const object = JSON.parse(result.stdout) as {
    spec: { template: { metadata?: { annotations?: Record<string, string> } } };
  };
  const found = object.spec.template.metadata?.annotations ?? {};
  return { hash: found['confighash.dev/hash'], sources: found['confighash.dev/sources'] };
}

async function waitForRevision(kubectl: Kubectl, ns: string, name: string, revision: number) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const result = await kubectl([
      'get',
      'replicasets',
      '-n',
      ns,
      '-l',
      `app=${name}`,
      '-o',
      'name',
    ]);
    if (result.stdout.trim().split('\n').filter(Boolean).length === revision) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  check(false, `${ns}/${name} has ${revision} ReplicaSet(s)`);
}

function check(condition: boolean, claim: string): void {
  if (!condition) throw new Error(`demo check failed: ${claim}`);
  process.stdout.write(`  ✓ ${claim}\n`);
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`\ndemo: ${error.message}\n`);
    process.exit(1);
  },
);
