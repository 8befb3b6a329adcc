// `npm run demo`: a narrated tour on a real local control plane. Every step runs
// the kubectl command it prints, and checks what it claims, so the demo fails
// loudly if confighash does not do what it says. `--keep` leaves it running.
// `--node`: the same story on a real node, with confighash installed from the
// manifests and pods that really restart and print the new value.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HASH, SOURCES } from '../src/workload/annotations.js';
import { type Kubectl, kubectlFor } from './cluster/kubectl.js';
import { startLocalCluster, startNodeCluster } from './cluster/main.js';
import { REPO_ROOT } from './cluster/repo.js';
import { poll, sleep } from './lib/poll.js';

const EXAMPLES = join(REPO_ROOT, 'examples/shop/');
const GREETER = join(REPO_ROOT, 'examples/greeter/app.yaml');
const MANIFESTS = join(REPO_ROOT, 'manifests/');
const keep = process.argv.includes('--keep');
/** Longer than the local cluster's follow debounce (LOCAL_FOLLOW_ARGS: 2 s). */
const FOLLOW_SETTLE_MS = 3_000;
const bold = (text: string) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);
const say = (text: string) => process.stdout.write(`\n${bold(`▶ ${text}`)}\n`);

/** What every step of a tour uses: kubectl for checks, `run` for the commands it shows. */
interface Tour {
  readonly kubectl: Kubectl;
  readonly run: ReturnType<typeof narrate>;
}

async function main(): Promise<void> {
  say(
    'Starting a local control plane (etcd, kube-apiserver, kube-controller-manager) and the webhook',
  );
  process.stdout.write('  (the first run builds Kubernetes from Go modules: many minutes)\n');
  const cluster = await startLocalCluster((line) => process.stdout.write(`  ${line}\n`));
  const kubectl = kubectlFor(cluster.kubeconfig);
  const tour: Tour = { kubectl, run: narrate(kubectl) };
  try {
    await applyShop(tour);
    const firstHash = await showHash(tour);
    await changeUnreadKey(tour, firstHash);
    await changeAppConfig(tour, firstHash);
    await applyWithMissingConfigMap(tour);
    await applyToPlainNamespace(tour);
    await applyFollowedApp(tour);
    await rotateSecretOutOfBand(tour);
    say('Done: config changed → template changed → rollout; config unchanged → nothing happens.');
    await keepRunning(cluster.kubeconfig);
  } finally {
    await cluster.stop();
  }
}

async function applyShop({ run }: Tour): Promise<void> {
  say(
    'Opt the namespace `shop` in with a label, and apply the app: ConfigMaps, a Secret, a Deployment',
  );
  await run(['apply', '-f', `${EXAMPLES}namespace.yaml`]);
  await run(['apply', '--server-side', '-n', 'shop', '-f', `${EXAMPLES}app.yaml`]);
}

/** Resolves with the hash the first apply wrote. */
async function showHash({ kubectl, run }: Tour): Promise<string | undefined> {
  say(
    'The pod template now carries a keyed hash of the referenced config, and the list of sources',
  );
  const first = await annotations(kubectl, 'shop', 'web');
  await showTemplateAnnotations(run, 'shop');
  check(first.hash !== undefined, `the Deployment template has ${HASH}`);
  await waitForRevision(kubectl, 'shop', 'web', 1);
  await run(['get', 'replicasets', '-n', 'shop', '-l', 'app=web']);
  return first.hash;
}

async function changeUnreadKey({ kubectl, run }: Tour, firstHash: string | undefined) {
  say(
    'Change a key nobody reads (`unrelated-team-setting` in shared-flags) and re-apply: nothing rolls',
  );
  await run(
    ['apply', '--server-side', '-n', 'shop', '-f', '-'],
    (await readFile(`${EXAMPLES}app.yaml`, 'utf8')).replace('"42"', '"43"'),
  );
  check((await annotations(kubectl, 'shop', 'web')).hash === firstHash, 'the hash did not change');
  await waitForRevision(kubectl, 'shop', 'web', 1);
}

async function changeAppConfig({ kubectl, run }: Tour, firstHash: string | undefined) {
  say('Change the app config (workers: 4 → 8) and re-apply the same files: one new ReplicaSet');
  await run(
    ['apply', '--server-side', '-n', 'shop', '-f', '-'],
    (await readFile(`${EXAMPLES}app.yaml`, 'utf8')).replace('workers: 4', 'workers: 8'),
  );
  await waitForRevision(kubectl, 'shop', 'web', 2);
  await run(['get', 'replicasets', '-n', 'shop', '-l', 'app=web']);
  check((await annotations(kubectl, 'shop', 'web')).hash !== firstHash, 'the hash changed');
  process.stdout.write(
    '  (no kubelet here, so pods stay Pending: the new ReplicaSet is the rollout)\n',
  );
}

async function applyWithMissingConfigMap({ run }: Tour): Promise<void> {
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
}

async function applyToPlainNamespace({ kubectl, run }: Tour): Promise<void> {
  say('A namespace without the label is left alone');
  await run(['create', 'namespace', 'plain']);
  await run(['apply', '--server-side', '-n', 'plain', '-f', `${EXAMPLES}app.yaml`]);
  const plain = await annotations(kubectl, 'plain', 'web');
  check(plain.hash === undefined, 'no hash in the unlabelled namespace');
  await showTemplateAnnotations(run, 'plain');
}

async function applyFollowedApp({ kubectl, run }: Tour): Promise<void> {
  say('Follow mode: a namespace labelled `follow`, the app applied client-side as most people do');
  await run(['apply', '-f', `${EXAMPLES}follow-namespace.yaml`]);
  await run(['apply', '-n', 'payments', '-f', `${EXAMPLES}app.yaml`]);
  await waitForRevision(kubectl, 'payments', 'web', 1);
  // Creating the sources was news to follow mode too: let it find nothing to roll first, so
  // that the rotation below is a change of its own (not merged into "created").
  process.stdout.write('  (follow mode sees the new ConfigMaps and Secret: nothing to roll)\n');
  await sleep(FOLLOW_SETTLE_MS);
}

async function rotateSecretOutOfBand({ kubectl, run }: Tour): Promise<void> {
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
  await checkConfigChangedEvent(run);
}

async function checkConfigChangedEvent(run: Tour['run']): Promise<void> {
  const events = await run([
    'get',
    'events.events.k8s.io',
    '-n',
    'payments',
    '--field-selector',
    'reason=ConfigChanged',
    '-o',
    'custom-columns=OBJECT:.regarding.name,REASON:.reason,NOTE:.note',
  ]);
  check(
    events.includes('secret/web-secret changed; rolling'),
    'the Event names the rotated Secret',
  );
}

async function showTemplateAnnotations(run: Tour['run'], ns: string): Promise<void> {
  await run([
    'get',
    'deployment',
    'web',
    '-n',
    ns,
    '-o',
    'jsonpath={.spec.template.metadata.annotations}',
  ]);
}

async function nodeTour(): Promise<void> {
  say(
    'Starting a control plane and a real node (kubelet, containerd, runc) in namespaces of its own',
  );
  process.stdout.write(
    '  (builds the confighash image from this source; the first run builds Kubernetes and containerd)\n',
  );
  const cluster = await startNodeCluster((line) => process.stdout.write(`  ${line}\n`));
  const kubectl = kubectlFor(cluster.kubeconfig);
  const tour: Tour = { kubectl, run: narrate(kubectl) };
  try {
    await installFromManifests(tour);
    const { app, before } = await applyGreeter(tour);
    await changeUnreadGreeterKey(tour, app, before);
    await changeGreeting(tour, app, before);
    say('Done: the app sees the new config after one apply, and only when its config changed.');
    await keepRunning(cluster.kubeconfig);
  } finally {
    await cluster.stop();
  }
}

async function installFromManifests({ run }: Tour): Promise<void> {
  say('Install confighash as a user would: the manifests, unchanged, with the image just built');
  await run(['apply', '--server-side', '-k', `${MANIFESTS}overlays/default`]);
  await run([
    'rollout',
    'status',
    'deployment/confighash',
    '-n',
    'confighash-system',
    '--timeout=240s',
  ]);
  await run(['get', 'pods', '-n', 'confighash-system', '-o', 'wide']);
}

/** Resolves with the app's file text and the pods it started. */
async function applyGreeter({ kubectl, run }: Tour): Promise<{ app: string; before: string[] }> {
  say('Opt a namespace in and apply an app that prints the greeting from its ConfigMap');
  await run(['create', 'namespace', 'greeter']);
  await run(['label', 'namespace', 'greeter', 'confighash.dev/enabled=true']);
  const app = await readFile(GREETER, 'utf8');
  await run(['apply', '--server-side', '-n', 'greeter', '-f', GREETER]);
  await waitForGreeterRollout(run);
  const before = await podNames(kubectl, 'greeter', 'greeter');
  await run(['logs', '-n', 'greeter', '-l', 'app=greeter', '--prefix']);
  return { app, before };
}

async function changeUnreadGreeterKey({ kubectl, run }: Tour, app: string, before: string[]) {
  say('Change a key the app does not read, and re-apply the file: no pod restarts');
  await run(['apply', '--server-side', '-n', 'greeter', '-f', '-'], app.replace('"42"', '"43"'));
  await waitForGreeterRollout(run);
  check(
    sameMembers(await podNames(kubectl, 'greeter', 'greeter'), before),
    'the same two pods are running',
  );
}

async function changeGreeting({ kubectl, run }: Tour, app: string, before: string[]) {
  say('Change the greeting (hello → bonjour), and re-apply the same file: the pods roll');
  await run(
    ['apply', '--server-side', '-n', 'greeter', '-f', '-'],
    app.replace('GREETING: hello', 'GREETING: bonjour'),
  );
  await waitForGreeterRollout(run);
  const after = await waitForPods(
    kubectl,
    'greeter',
    'greeter',
    (pods) => pods.length === 2 && pods.every((pod) => !before.includes(pod)),
  );
  check(after.length === 2, 'two new pods replaced the old ones');
  const greetings = [];
  for (const pod of after) greetings.push(await run(['logs', '-n', 'greeter', pod]));
  check(
    greetings.every((log) => log.includes('greeting=bonjour')),
    'both new pods print the new greeting',
  );
}

async function waitForGreeterRollout(run: Tour['run']): Promise<void> {
  await run(['rollout', 'status', 'deployment/greeter', '-n', 'greeter', '--timeout=120s']);
}

async function keepRunning(kubeconfig: string): Promise<void> {
  if (!keep) return;
  process.stdout.write(`\nStill running (Ctrl-C to stop):\n  export KUBECONFIG=${kubeconfig}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

/** Running pods of an app, not counting those already stopping. */
async function podNames(kubectl: Kubectl, ns: string, app: string): Promise<string[]> {
  const result = await kubectl(['get', 'pods', '-n', ns, '-l', `app=${app}`, '-o', 'json']);
  const list = JSON.parse(result.stdout) as {
    items: { metadata: { name: string; deletionTimestamp?: string }; status: { phase?: string } }[];
  };
  return list.items
    .filter((pod) => !pod.metadata.deletionTimestamp && pod.status.phase === 'Running')
    .map((pod) => pod.metadata.name);
}

async function waitForPods(
  kubectl: Kubectl,
  ns: string,
  app: string,
  done: (pods: string[]) => boolean,
): Promise<string[]> {
  let pods: string[] = [];
  return poll(
    async () => {
      pods = await podNames(kubectl, ns, app);
      return done(pods) ? pods : undefined;
    },
    { restMs: 500, timeoutMs: 120_000, timedOut: () => pods },
  );
}

const sameMembers = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item) => b.includes(item));

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
  return { hash: found[HASH], sources: found[SOURCES] };
}

async function waitForRevision(kubectl: Kubectl, ns: string, name: string, revision: number) {
  await poll(
    async () => {
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
      return result.stdout.trim().split('\n').filter(Boolean).length === revision
        ? true
        : undefined;
    },
    {
      restMs: 250,
      timeoutMs: 30_000,
      timedOut: () => {
        check(false, `${ns}/${name} has ${revision} ReplicaSet(s)`);
        return false;
      },
    },
  );
}

function check(condition: boolean, claim: string): void {
  if (!condition) throw new Error(`demo check failed: ${claim}`);
  process.stdout.write(`  ✓ ${claim}\n`);
}

(process.argv.includes('--node') ? nodeTour() : main()).then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`\ndemo: ${error.message}\n`);
    process.exit(1);
  },
);
