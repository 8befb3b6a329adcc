// `kubectl apply --server-side -f -` (with or without `-n NS`) as the tests' `k` runs it: the
// same request kubectl sends for each object — a PATCH of type apply-patch, field manager
// `kubectl`, strict field validation — from this process. A kubectl apply costs a third of a
// second of CPU (its check that the server validates fields parses the group's OpenAPI
// document), and the e2e suite, CPU-bound on two cores, ran 149 of them. Anything else, and any
// apply the apiserver does not answer 2xx, is kubectl's own: run again by kubectl, it fails
// with kubectl's message (an object applied before the failing one is applied again, unchanged).

import { loadAll } from 'js-yaml';
import { type AdminTls, adminRequest, adminTls } from './admin-api.js';

type Run = (args: readonly string[], input?: string) => Promise<string>;

interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

interface Resource {
  readonly name: string;
  readonly namespaced: boolean;
}

/** `k`, with `apply --server-side [-n NS] -f -` sent from this process, as `kubeconfig`'s admin. */
export function applyingInProcess(k: Run, kubeconfig: string): Run {
  const resources = new ResourceNames();
  let admin: Promise<AdminTls> | undefined;
  return async (args, input) => {
    const namespace = applyNamespace(args);
    if (namespace === undefined || input === undefined) return k(args, input);
    admin ??= adminTls(kubeconfig);
    const tls = await admin;
    const lines: string[] = [];
    for (const manifest of manifestsOf(input)) {
      const applied = await apply(tls, resources, manifest, namespace ?? 'default');
      if (!applied) return k(args, input);
      lines.push(applied);
    }
    return lines.join('\n');
  };
}

/**
 * The namespace `-n` gives an apply this process sends (null without one); undefined for any
 * other command.
 */
function applyNamespace(args: readonly string[]): string | null | undefined {
  const command = args.join(' ');
  if (command === 'apply --server-side -f -') return null;
  const inNamespace = /^apply --server-side -n (\S+) -f -$/.exec(command);
  return inNamespace ? inNamespace[1] : undefined;
}

function manifestsOf(input: string): Manifest[] {
  return loadAll(input).filter((document): document is Manifest => Boolean(document));
}

/** kubectl's line for an applied object, or undefined when kubectl should say what went wrong. */
async function apply(
  admin: AdminTls,
  resources: ResourceNames,
  manifest: Manifest,
  defaultNamespace: string,
): Promise<string | undefined> {
  const resource = await resources.of(admin, manifest.apiVersion, manifest.kind);
  if (!resource || !manifest.metadata?.name) return undefined;
  const namespace = manifest.metadata.namespace ?? defaultNamespace;
  const base = manifest.apiVersion.includes('/')
    ? `/apis/${manifest.apiVersion}`
    : `/api/${manifest.apiVersion}`;
  const scope = resource.namespaced ? `/namespaces/${namespace}` : '';
  const path =
    `${base}${scope}/${resource.name}/${manifest.metadata.name}` +
    '?fieldManager=kubectl&fieldValidation=Strict';
  const response = await adminRequest(admin, path, {
    method: 'PATCH',
    headers: { 'content-type': 'application/apply-patch+yaml' },
    body: JSON.stringify(manifest),
    timeoutMs: 60_000,
  });
  if (response.status >= 300) return undefined;
  const group = manifest.apiVersion.includes('/') ? `.${manifest.apiVersion.split('/')[0]}` : '';
  return `${manifest.kind.toLowerCase()}${group}/${manifest.metadata.name} serverside-applied`;
}

/** The resource of each kind, from the apiserver's discovery of its group version, read once. */
class ResourceNames {
  readonly #byVersion = new Map<string, Promise<Map<string, Resource>>>();

  /** Undefined for a kind the apiserver does not serve (kubectl says so better). */
  async of(admin: AdminTls, apiVersion: string, kind: string): Promise<Resource | undefined> {
    const known = await this.#read(admin, apiVersion);
    if (known.has(kind)) return known.get(kind);
    // A CRD applied since the last read: read its group version again.
    this.#byVersion.delete(apiVersion);
    return (await this.#read(admin, apiVersion)).get(kind);
  }

  #read(admin: AdminTls, apiVersion: string): Promise<Map<string, Resource>> {
    let reading = this.#byVersion.get(apiVersion);
    if (!reading) {
      reading = discover(admin, apiVersion);
      this.#byVersion.set(apiVersion, reading);
      reading.catch(() => this.#byVersion.delete(apiVersion));
    }
    return reading;
  }
}

async function discover(admin: AdminTls, apiVersion: string): Promise<Map<string, Resource>> {
  const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const response = await adminRequest(admin, path);
  const resources = new Map<string, Resource>();
  if (response.status !== 200) return resources;
  const list = JSON.parse(response.body) as {
    resources: { name: string; kind: string; namespaced: boolean }[];
  };
  for (const { name, kind, namespaced } of list.resources) {
    // Subresources (deployments/status) share their parent's kind.
    if (!name.includes('/')) resources.set(kind, { name, namespaced });
  }
  return resources;
}
