// The real-apiserver side of the bench: a keep-alive client with the admin
// credentials of the local control plane (for the 10,000 creates and the
// timed applies, where a kubectl process per call would be what is measured),
// and the registration of the webhook as tools/cluster/webhook.ts does it.

import { readFile } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import { dumpYaml, KubeConfig, loadYaml } from '@kubernetes/client-node';
import { httpRequest } from '../../tools/cluster/http.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

export interface ApiResponse {
  readonly status: number;
  readonly body: string;
}

export interface ApiClient {
  readonly server: URL;
  readonly tls: { readonly ca?: string; readonly cert?: string; readonly key?: string };
  request(method: string, path: string, body?: string, contentType?: string): Promise<ApiResponse>;
  /** Like request, but throws unless the status is one of `ok`. */
  expect(
    ok: readonly number[],
    method: string,
    path: string,
    body?: string,
    contentType?: string,
  ): Promise<ApiResponse>;
  close(): void;
}

export async function connectApi(kubeconfigFile: string): Promise<ApiClient> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigFile);
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const server = new URL(kubeConfig.getCurrentCluster()?.server ?? '');
  const pem = (value: unknown) =>
    value === undefined ? undefined : Buffer.isBuffer(value) ? value.toString() : String(value);
  const tls = { ca: pem(options.ca), cert: pem(options.cert), key: pem(options.key) };
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ...tls });
  const request: ApiClient['request'] = async (
    method,
    path,
    body,
    contentType = 'application/json',
  ) => {
    const { status, body: text } = await httpRequest(new URL(path, server), {
      method,
      agent,
      headers: {
        accept: 'application/json',
        ...(body === undefined
          ? {}
          : { 'content-type': contentType, 'content-length': Buffer.byteLength(body) }),
      },
      body,
      timeoutMs: 30_000,
    });
    return { status, body: text };
  };
  return {
    server,
    tls,
    request,
    async expect(ok, method, path, body, contentType) {
      const response = await request(method, path, body, contentType);
      if (!ok.includes(response.status)) {
        throw new Error(
          `${method} ${path}: HTTP ${response.status} ${response.body.slice(0, 300)}`,
        );
      }
      return response;
    },
    close: () => agent.destroy(),
  };
}

interface Registration {
  metadata: { name: string };
  webhooks: Record<string, unknown>[];
}

const registrationManifest = async () =>
  loadYaml<Registration>(
    await readFile(join(REPO_ROOT, 'manifests/base/mutatingwebhookconfiguration.yaml'), 'utf8'),
  );

const clientConfig = (url: string, caPem: string) => ({
  url,
  caBundle: Buffer.from(caPem).toString('base64'),
});

/** The manifests' MutatingWebhookConfiguration, pointed at `url` (docs/design.md §8). */
export async function webhookRegistration(url: string, caPem: string): Promise<string> {
  const manifest = await registrationManifest();
  for (const entry of manifest.webhooks) entry.clientConfig = clientConfig(url, caPem);
  return dumpYaml(manifest);
}

/**
 * The manifests' registration again, as `name`, for another webhook at `url` and the
 * namespaces labelled `label: "true"` only (scenario 4's floor (b) and wave).
 */
export async function labelledRegistration(
  name: string,
  url: string,
  caPem: string,
  label: string,
): Promise<Registration> {
  const manifest = await registrationManifest();
  return {
    ...manifest,
    metadata: { name: `confighash-bench-${name}` },
    webhooks: manifest.webhooks.map((entry) => ({
      ...entry,
      name: `${name}.bench.confighash.dev`,
      clientConfig: clientConfig(url, caPem),
      namespaceSelector: { matchLabels: { [label]: 'true' } },
    })),
  };
}

/** Runs `work(i)` for i in [from, to) with at most `parallel` in flight. */
export async function forEachBounded(
  from: number,
  to: number,
  parallel: number,
  work: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < to) await work(next++);
    }),
  );
}
