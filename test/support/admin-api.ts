// The admin credentials of a harness kubeconfig (tools/cluster/control-plane.ts writes it as
// JSON, for a node's control plane too), for what the tests send the apiserver themselves:
// the clean-up's deletions, the reads the tests poll with, and their server-side applies.

import { readFile } from 'node:fs/promises';
import {
  type HttpRequestOptions,
  type HttpResponse,
  httpRequest,
} from '../../tools/cluster/http.js';

export interface AdminTls {
  readonly server: URL;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export async function adminTls(kubeconfig: string): Promise<AdminTls> {
  const config = JSON.parse(await readFile(kubeconfig, 'utf8'));
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString();
  return {
    server: new URL(config.clusters[0].cluster.server),
    ca: decode(config.clusters[0].cluster['certificate-authority-data']),
    cert: decode(config.users[0].user['client-certificate-data']),
    key: decode(config.users[0].user['client-key-data']),
  };
}

/** The API path of a namespaced object (or, without `name`, its collection) of the kinds tests poll. */
const PATHS: Readonly<Record<string, string>> = {
  deployment: '/apis/apps/v1/namespaces/NS/deployments',
  replicaset: '/apis/apps/v1/namespaces/NS/replicasets',
  statefulset: '/apis/apps/v1/namespaces/NS/statefulsets',
  daemonset: '/apis/apps/v1/namespaces/NS/daemonsets',
  lease: '/apis/coordination.k8s.io/v1/namespaces/NS/leases',
};

/** The kinds `readObject` reads without kubectl (lower case, singular). */
export function readsWithoutKubectl(kind: string): boolean {
  return kind in PATHS;
}

/**
 * An object, or undefined when it does not exist: one GET as the admin, in this process. A
 * poll through kubectl costs a process and a quarter of a second of CPU a try, which two files
 * polling side by side take from the controllers they wait for.
 */
export async function readObject<T>(
  admin: AdminTls,
  namespace: string,
  kind: string,
  name: string,
): Promise<T | undefined> {
  return adminGet<T>(admin, `${collectionPath(namespace, kind)}/${name}`);
}

/** Every object of `kind` in `namespace`, each with its kind (a list's items carry none). */
export async function listObjects<T extends object>(
  admin: AdminTls,
  namespace: string,
  kind: string,
): Promise<(T & { kind: string })[]> {
  const list = await adminGet<{ kind: string; items: T[] }>(admin, collectionPath(namespace, kind));
  const itemKind = list?.kind.replace(/List$/, '') ?? '';
  return (list?.items ?? []).map((item) => ({ ...item, kind: itemKind }));
}

function collectionPath(namespace: string, kind: string): string {
  const path = PATHS[kind];
  if (!path) throw new Error(`no API path known for ${kind}: read it with kubectl`);
  return path.replace('NS', encodeURIComponent(namespace));
}

/**
 * The names of a collection's objects (its path, with any query), read as metadata only: a
 * clean-up's list of CRDs would otherwise carry their schemas.
 */
export async function listNames(admin: AdminTls, path: string): Promise<string[]> {
  const list = await adminGet<{ items: { metadata: { name: string } }[] }>(admin, path, {
    accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  });
  return (list?.items ?? []).map((item) => item.metadata.name);
}

/** One request to the apiserver as the admin (`path` with any query); any status resolves. */
export function adminRequest(
  admin: AdminTls,
  path: string,
  options: Pick<HttpRequestOptions, 'method' | 'headers' | 'body' | 'timeoutMs'> = {},
): Promise<HttpResponse> {
  return httpRequest(new URL(path, admin.server), {
    timeoutMs: 30_000,
    ...options,
    ca: admin.ca,
    cert: admin.cert,
    key: admin.key,
  });
}

async function adminGet<T>(
  admin: AdminTls,
  path: string,
  headers: Record<string, string> = {},
): Promise<T | undefined> {
  const response = await adminRequest(admin, path, { headers });
  if (response.status === 404) return undefined;
  if (response.status !== 200) {
    throw new Error(`GET ${path}: ${response.status} ${response.body.slice(0, 300)}`);
  }
  return JSON.parse(response.body) as T;
}
