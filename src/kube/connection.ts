// One long-lived, keep-alive connection pool to the API server, built from the
// credentials @kubernetes/client-node resolves. client-node 1.4 opens a new
// connection (a new TLS handshake) per request, so hot-path reads go through
// this agent instead; client-node is used for what it is good at: finding the
// cluster (KUBECONFIG, ~/.kube/config, in-cluster) and its credentials.

import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

export interface ApiConnection {
  readonly server: URL;
  readonly agent: http.Agent;
  /** Authorization headers; tokens that rotate on disk are re-read every minute. */
  headers(): Promise<Readonly<Record<string, string>>>;
  close(): void;
}

const CREDENTIAL_TTL_MS = 60_000;

export interface ConnectionOptions {
  /** Upper bound on parallel sockets; idle ones stay open for reuse. */
  readonly maxSockets?: number;
}

export async function connectToCluster(
  kubeConfig: KubeConfig,
  { maxSockets = 64 }: ConnectionOptions = {},
): Promise<ApiConnection> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const server = new URL(cluster.server);
  const resolved = await resolveCredentials(kubeConfig);
  const agentOptions = { keepAlive: true, maxSockets, scheduling: 'lifo' as const };
  const agent =
    server.protocol === 'https:'
      ? new https.Agent({
          ...agentOptions,
          ca: resolved.ca,
          cert: resolved.cert,
          key: resolved.key,
          rejectUnauthorized: resolved.rejectUnauthorized ?? true,
          servername: resolved.servername,
        })
      : new http.Agent(agentOptions);

  let cached = { headers: resolved.headers, at: Date.now() };
  return {
    server,
    agent,
    async headers() {
      if (Date.now() - cached.at > CREDENTIAL_TTL_MS) {
        cached = { headers: (await resolveCredentials(kubeConfig)).headers, at: Date.now() };
      }
      return cached.headers;
    },
    close: () => agent.destroy(),
  };
}

interface Credentials {
  ca?: https.RequestOptions['ca'];
  cert?: https.RequestOptions['cert'];
  key?: https.RequestOptions['key'];
  rejectUnauthorized?: boolean;
  servername?: string;
  headers: Record<string, string>;
}

async function resolveCredentials(kubeConfig: KubeConfig): Promise<Credentials> {
  const options: https.RequestOptions = {};
  await forCredentialResolution(kubeConfig).applyToHTTPSOptions(options);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (typeof value === 'string') headers[name.toLowerCase()] = value;
  }
  if (options.auth) headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
  return {
    ca: options.ca,
    cert: options.cert,
    key: options.key,
    rejectUnauthorized: options.rejectUnauthorized,
    servername: options.servername ?? undefined,
    headers,
  };
}

/**
 * client-node refuses to resolve credentials for an http:// server unless TLS
 * verification is off (it builds an agent we do not use). There is no TLS to
 * verify on plain HTTP, so a copy with the flag set resolves the same headers.
 */
function forCredentialResolution(kubeConfig: KubeConfig): KubeConfig {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster?.server.startsWith('http:')) return kubeConfig;
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kubeConfig.clusters.map((c) =>
      c.name === cluster.name ? { ...c, skipTLSVerify: true } : c,
    ),
    users: kubeConfig.users,
    contexts: kubeConfig.contexts,
    currentContext: kubeConfig.currentContext,
  });
  return copy;
}
