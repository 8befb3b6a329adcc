// Where the cluster is and how to authenticate to it, as @kubernetes/client-node
// resolves them (--kubeconfig, KUBECONFIG, ~/.kube/config, the pod's service
// account, --context; client
// certificates, tokens, token files, exec plugins, OIDC) — resolved in a
// short-lived child process. client-node's generated API is loaded by KubeConfig
// itself and costs tens of MB of heap; in a child it never enters the serving
// process (a worker thread leaves part of it behind after exit: BENCHMARKS.md has the figures).
// client-node stays the one thing that reads kubeconfigs and credentials.

import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** What client-node resolved: the server, its TLS material and the request headers to send. */
export interface ClusterAccess {
  readonly server: URL;
  /** The current context's namespace, if it names one. */
  readonly namespace?: string;
  readonly tls: ClientTls;
  /** Authorization (and any other) headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * When to ask again even without a 401: credentials that change on their own
   * (exec plugins, auth providers, the service account's token file) have one;
   * static ones (a client certificate, a fixed token) do not.
   */
  readonly refreshAt?: number;
}

export interface ClientTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly rejectUnauthorized: boolean;
  readonly servername?: string;
}

/** A kubeconfig that cannot be loaded or names no cluster: the user's to fix. */
export class KubeconfigError extends Error {}

/**
 * Which kubeconfig and context, as kubectl's --kubeconfig and --context choose them.
 * Without `kubeconfig`, KUBECONFIG's files (joined by ':') are merged as kubectl
 * merges them: a missing or empty file is skipped, the first file to name a cluster, user or
 * context wins it, and the current-context is the first file's that sets one.
 * client-node 1.4's loadFromDefault differs on all three: it fails on a missing file
 * and on a name two files define, and takes the last current-context.
 */
export interface KubeconfigSelection {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** Asks client-node, once, for the current cluster access. */
export type ResolveAccess = () => Promise<ClusterAccess>;

/**
 * How often credentials that change on their own are asked for again. A child
 * process costs ≈ 1 s of CPU; a 401 asks at once, so this only bounds how long a
 * rotated-but-still-valid credential keeps being used (kubelet rotates the token
 * file at 80 % of a lifetime of at least 10 minutes).
 */
export const DYNAMIC_REFRESH_MS = 5 * 60_000;
/** A token that expires sooner than that is asked for again halfway to its expiry, not sooner than this. */
const MIN_REFRESH_MS = 10_000;
const RESOLVE_TIMEOUT_MS = 60_000;
/**
 * The child's script, plain JavaScript beside this module: src/kube/ under tsx, dist/kube/ once
 * compiled (tsconfig's allowJs copies it there).
 */
const RESOLVER_SCRIPT = fileURLToPath(new URL('./resolver.mjs', import.meta.url));

/** Resolves cluster access in a child process with `env` (KUBECONFIG, HOME, KUBERNETES_SERVICE_*). */
export function childProcessResolver(
  env: NodeJS.ProcessEnv = process.env,
  selection: KubeconfigSelection = {},
): ResolveAccess {
  const clientNode = pathToFileURL(
    createRequire(import.meta.url).resolve('@kubernetes/client-node'),
  ).href;
  return () =>
    new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [RESOLVER_SCRIPT, clientNode, JSON.stringify(selection)],
        // No execArgv (loaders, profilers, heap flags) of the serving process: a plain Node.
        { env, timeout: RESOLVE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
        (error, stdout, stderr) => {
          if (error) {
            const reason = stderr.trim().split('\n').pop() || error.message;
            return reject(new Error(`cannot resolve the cluster credentials: ${reason}`));
          }
          try {
            resolve(accessFromReply(JSON.parse(stdout) as ResolverReply, Date.now()));
          } catch (cause) {
            reject(cause);
          }
        },
      );
    });
}

/** The child's answer on stdout: one JSON object. Binary TLS material travels as base64. */
export type ResolverReply =
  | { readonly error: string }
  | {
      readonly server: string;
      readonly namespace?: string;
      readonly ca?: string;
      readonly cert?: string;
      readonly key?: string;
      readonly rejectUnauthorized?: boolean;
      readonly servername?: string;
      readonly headers: Record<string, string>;
      readonly basicAuth?: string;
      readonly dynamic: boolean;
    };

export function accessFromReply(reply: ResolverReply, now: number): ClusterAccess {
  if ('error' in reply) throw new KubeconfigError(reply.error);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers)) headers[name.toLowerCase()] = value;
  if (reply.basicAuth) {
    headers.authorization = `Basic ${Buffer.from(reply.basicAuth).toString('base64')}`;
  }
  const bytes = (base64?: string) =>
    base64 === undefined ? undefined : Buffer.from(base64, 'base64');
  const refreshAt = reply.dynamic ? refreshTime(headers.authorization, now) : undefined;
  return {
    server: new URL(reply.server),
    ...(reply.namespace ? { namespace: reply.namespace } : {}),
    tls: {
      ca: bytes(reply.ca),
      cert: bytes(reply.cert),
      key: bytes(reply.key),
      rejectUnauthorized: reply.rejectUnauthorized ?? true,
      servername: reply.servername,
    },
    headers,
    ...(refreshAt === undefined ? {} : { refreshAt }),
  };
}

/** DYNAMIC_REFRESH_MS from now, or halfway to a bearer JWT's `exp` when that is sooner. */
export function refreshTime(authorization: string | undefined, now: number): number {
  const expiresAt = jwtExpiry(authorization);
  const byExpiry =
    expiresAt === undefined
      ? Number.POSITIVE_INFINITY
      : Math.max((expiresAt - now) / 2, MIN_REFRESH_MS);
  return now + Math.min(DYNAMIC_REFRESH_MS, byExpiry);
}

function jwtExpiry(authorization: string | undefined): number | undefined {
  const payload = authorization?.match(/^Bearer [\w-]+\.([\w-]+)\.[\w-]+$/)?.[1];
  if (!payload) return undefined;
  try {
    const { exp } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      exp?: unknown;
    };
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
