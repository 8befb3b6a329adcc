// What the tests' `k` sends from this process instead of running kubectl, as kubectl would send
// it for each object:
// - `kubectl apply --server-side [-n NS] -f -`: a PATCH of type apply-patch, field manager
//   `kubectl`, strict field validation;
// - `kubectl apply [-n NS] -f -` (client-side) of an object that does not exist yet: a POST,
//   field manager `kubectl-client-side-apply`, strict field validation, carrying the
//   last-applied-configuration annotation kubectl writes.
// A kubectl apply costs a third of a second of CPU (its check that the server validates fields
// parses the group's OpenAPI document), and the e2e suite, CPU-bound, ran 238 of these
// (4 December 2026). Anything else — an object that exists (the client-side apply's three-way
// merge is kubectl's), any request the apiserver does not answer 2xx — is kubectl's own: run by
// kubectl, it says what kubectl says.

import { dump, loadAll } from 'js-yaml';
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

/** `k`, with the applies above sent from this process, as `kubeconfig`'s admin. */
export function applyingInProcess(k: Run, kubeconfig: string): Run {
  const resources = new ResourceNames();
  let admin: Promise<AdminTls> | undefined;
  return async (args, input) => {
    const command = inProcessCommand(args);
    if (command === undefined || input === undefined) return k(args, input);
    admin ??= adminTls(kubeconfig);
    const tls = await admin;
    const manifests = manifestsOf(input);
    // kubectl's message for an input without objects.
    if (manifests.length === 0) return k(args, input);
    const kind = command.serverSide ? SERVER_SIDE_APPLY : CLIENT_SIDE_CREATE;
    const lines: string[] = [];
    for (const [i, manifest] of manifests.entries()) {
      const written = await send(tls, resources, manifest, command.namespace, kind);
      if (written) {
        lines.push(written);
        continue;
      }
      // From the first object not written here, the rest in one kubectl run, as one apply of
      // them all: objects applied together land together (a follower debouncing them must see
      // one change, not one per kubectl run), and what went wrong kubectl says.
      const rest = manifests.slice(i).map((object) => dump(object));
      lines.push((await k(args, rest.join('---\n'))).trimEnd());
      break;
    }
    return lines.join('\n');
  };
}

interface InProcessCommand {
  readonly serverSide: boolean;
  /** `-n`'s namespace; null without one. */
  readonly namespace: string | null;
}

/** The command `args` name, when this process sends it; undefined for any other command. */
function inProcessCommand(args: readonly string[]): InProcessCommand | undefined {
  const command = /^apply( --server-side)?(?: -n (\S+))? -f -$/.exec(args.join(' '));
  return command ? { serverSide: Boolean(command[1]), namespace: command[2] ?? null } : undefined;
}

function manifestsOf(input: string): Manifest[] {
  return loadAll(input).filter((document): document is Manifest => Boolean(document));
}

/**
 * Where `manifest` is, or is made: its collection's path and its namespace; undefined where
 * kubectl would refuse it (no name; a namespace other than `-n`'s) or does not know its kind.
 */
async function collectionOf(
  admin: AdminTls,
  resources: ResourceNames,
  manifest: Manifest,
  namespaceFlag: string | null,
): Promise<{ path: string; namespace?: string } | undefined> {
  const resource = await resources.of(admin, manifest.apiVersion, manifest.kind);
  if (!resource || !manifest.metadata?.name) return undefined;
  const own = manifest.metadata.namespace;
  if (resource.namespaced && own && namespaceFlag && own !== namespaceFlag) return undefined;
  const base = manifest.apiVersion.includes('/')
    ? `/apis/${manifest.apiVersion}`
    : `/api/${manifest.apiVersion}`;
  if (!resource.namespaced) return { path: `${base}/${resource.name}` };
  const namespace = own ?? namespaceFlag ?? 'default';
  return { path: `${base}/namespaces/${namespace}/${resource.name}`, namespace };
}

/** kubectl's name of an object in what it prints: `kind[.group]/name`. */
function printedName(manifest: Manifest): string {
  const group = manifest.apiVersion.includes('/') ? `.${manifest.apiVersion.split('/')[0]}` : '';
  return `${manifest.kind.toLowerCase()}${group}/${manifest.metadata.name}`;
}

/** How kubectl sends one object of each command, and the word it prints for it. */
interface WriteKind {
  readonly method: 'PATCH' | 'POST';
  readonly fieldManager: string;
  readonly contentType: string;
  /** Where the object goes: the object's own path (PATCH) or its collection's (POST). */
  path(collection: string, name: string): string;
  /** The body, from the object with its namespace filled in. */
  body(object: Manifest): Manifest;
  readonly printed: string;
}

const SERVER_SIDE_APPLY: WriteKind = {
  method: 'PATCH',
  fieldManager: 'kubectl',
  contentType: 'application/apply-patch+yaml',
  path: (collection, name) => `${collection}/${name}`,
  body: (object) => object,
  printed: 'serverside-applied',
};

/** A client-side apply of an object that does not exist yet; one that exists is kubectl's (it merges). */
const CLIENT_SIDE_CREATE: WriteKind = {
  method: 'POST',
  fieldManager: 'kubectl-client-side-apply',
  contentType: 'application/json',
  path: (collection) => collection,
  body: withLastApplied,
  printed: 'created',
};

/**
 * kubectl's line for an object sent as `kind`, with kubectl's field manager and strict field
 * validation; undefined when it is kubectl's to do, or to say what went wrong (not 2xx).
 */
async function send(
  admin: AdminTls,
  resources: ResourceNames,
  manifest: Manifest,
  namespaceFlag: string | null,
  kind: WriteKind,
): Promise<string | undefined> {
  const collection = await collectionOf(admin, resources, manifest, namespaceFlag);
  if (!collection) return undefined;
  const object = {
    ...manifest,
    metadata: {
      ...manifest.metadata,
      ...(collection.namespace ? { namespace: collection.namespace } : {}),
    },
  };
  const query = `fieldManager=${kind.fieldManager}&fieldValidation=Strict`;
  const response = await adminRequest(
    admin,
    `${kind.path(collection.path, manifest.metadata.name)}?${query}`,
    {
      method: kind.method,
      headers: { 'content-type': kind.contentType },
      body: JSON.stringify(kind.body(object)),
      timeoutMs: 60_000,
    },
  );
  return response.status < 300 ? `${printedName(manifest)} ${kind.printed}` : undefined;
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * `object` with the annotation kubectl's client-side apply keeps its last input in: that input as
 * JSON, keys sorted (Go's encoding of it), its annotations without this one (an empty map
 * where it had no other), and a newline.
 */
function withLastApplied<T extends Manifest>(object: T): T {
  const annotations = (object.metadata as { annotations?: Record<string, string> }).annotations;
  const { [LAST_APPLIED]: _, ...kept } = annotations ?? {};
  const input = { ...object, metadata: { ...object.metadata, annotations: kept } };
  return {
    ...object,
    metadata: {
      ...object.metadata,
      annotations: { ...kept, [LAST_APPLIED]: `${JSON.stringify(sortedKeys(input))}\n` },
    },
  };
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
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
