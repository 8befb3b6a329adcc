// @ts-check
// The credential child (credentials.ts runs it: `node resolver.mjs CLIENT_NODE_URL SELECTION`):
// loads the kubeconfig as kubectl would choose and merge it (KubeconfigSelection), asks
// client-node for the credentials, and writes one JSON object on stdout (ResolverReply).
// Plain JavaScript, so that a plain Node runs it from dist/ and from src/ alike. The one
// client-node call that applies every kind of credential is applyToHTTPSOptions; for an
// http:// server it refuses unless TLS verification is off, so a copy with the flag set
// resolves the same headers there (there is no TLS to verify).

import { statSync } from 'node:fs';
import { delimiter } from 'node:path';

// Node 20.6 and later; before, the generated API simply loads (a static import of the name
// would fail there).
const { register } = await import('node:module');
register?.(new URL('./resolver-hooks.mjs', import.meta.url));
/** @typedef {import('@kubernetes/client-node').KubeConfig} KubeConfigType */
/** @type {{ KubeConfig: typeof import('@kubernetes/client-node').KubeConfig }} */
const { KubeConfig } = await import(new URL('./config.js', process.argv[2]).href);
/** @type {import('./credentials.js').KubeconfigSelection} */
const selection = JSON.parse(/** @type {string} */ (process.argv[3]));
/** @param {import('./credentials.js').ResolverReply} answer */
const reply = (answer) => process.stdout.write(JSON.stringify(answer));
/** @param {unknown} value client-node's CA, certificate and key: a Buffer or a string each */
const base64 = (value) =>
  value === undefined || value === null
    ? undefined
    : Buffer.from(/** @type {Buffer | string} */ (value)).toString('base64');
// kubectl skips a KUBECONFIG file that is missing or empty; client-node fails on both.
/** @param {string} file */
const hasContent = (file) => (statSync(file, { throwIfNoEntry: false })?.size ?? 0) > 0;

// KUBECONFIG's files merged as kubectl merges them (KubeconfigSelection).
/** @param {string[]} files */
const loadMerged = (files) => {
  const present = files.filter(hasContent);
  if (present.length === 0) {
    throw new Error(
      `none of the files KUBECONFIG names exists or has content: ${files.join(delimiter)}`,
    );
  }
  /** @type {Pick<KubeConfigType, 'clusters' | 'users' | 'contexts' | 'currentContext'>} */
  const merged = { clusters: [], users: [], contexts: [], currentContext: '' };
  for (const file of present) {
    const one = new KubeConfig();
    one.loadFromFile(file);
    for (const list of /** @type {const} */ (['clusters', 'users', 'contexts'])) {
      /** @type {{ name: string }[]} */
      const known = merged[list];
      for (const entry of one[list]) {
        if (!known.some(({ name }) => name === entry.name)) known.push(entry);
      }
    }
    merged.currentContext ||= one.currentContext || '';
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(merged);
  return kubeConfig;
};

const load = () => {
  if (selection.kubeconfig) {
    if (statSync(selection.kubeconfig, { throwIfNoEntry: false })?.size === 0) {
      throw new Error(`${selection.kubeconfig} is empty`);
    }
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(selection.kubeconfig);
    return kubeConfig;
  }
  const files = (process.env.KUBECONFIG ?? '').split(delimiter).filter((file) => file);
  if (files.length > 0) return loadMerged(files);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
};

let kubeConfig;
try {
  kubeConfig = load();
} catch (error) {
  reply({ error: `cannot load the kubeconfig: ${/** @type {Error} */ (error).message}` });
  process.exit(0);
}
if (selection.context) {
  if (!kubeConfig.getContextObject(selection.context)) {
    const known = kubeConfig.contexts.map((context) => context.name).join(', ') || 'none';
    reply({
      error: `context '${selection.context}' is not in the kubeconfig (contexts: ${known})`,
    });
    process.exit(0);
  }
  kubeConfig.setCurrentContext(selection.context);
}
const cluster = kubeConfig.getCurrentCluster();
if (!cluster) {
  reply({ error: 'no Kubernetes cluster found: set KUBECONFIG, or run in a pod' });
  process.exit(0);
}
const user = kubeConfig.getCurrentUser();
const namespace =
  kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace || undefined;
if (cluster.server.startsWith('http:')) {
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kubeConfig.clusters.map((c) =>
      c.name === cluster.name ? { ...c, skipTLSVerify: true } : c,
    ),
    users: kubeConfig.users,
    contexts: kubeConfig.contexts,
    currentContext: kubeConfig.currentContext,
  });
  kubeConfig = copy;
}
/** @type {import('node:https').RequestOptions} */
const options = {};
await kubeConfig.applyToHTTPSOptions(options);
/** @type {Record<string, string>} */
const headers = {};
for (const [name, value] of Object.entries(options.headers ?? {})) {
  if (typeof value === 'string') headers[name] = value;
}
reply({
  server: cluster.server,
  namespace,
  ca: base64(options.ca),
  cert: base64(options.cert),
  key: base64(options.key),
  rejectUnauthorized: options.rejectUnauthorized,
  servername: options.servername || undefined,
  headers,
  basicAuth: options.auth || undefined,
  dynamic: Boolean(user && (user.exec || user.authProvider)),
});
