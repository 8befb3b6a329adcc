// docs/design.md §10, first row: a pod that reaches the webhook's port POSTs forged
// AdmissionReviews straight to it (not through the apiserver), naming a Secret
// and a ConfigMap that exist, in kube-system, in a namespace that is not opted
// in, and in the webhook's own namespace (labelled, which must not matter). The
// apiserver's own request metrics prove that confighash read neither; a review
// for an opted-in namespace, in the same file, proves the metrics see a read.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpRequest } from '../../tools/cluster/http.js';
import { configMap, e2eFile, namespace, secret, workload, yamlDocuments } from '../support/e2e.js';

const OWN = 'forged-own';
const UNLABELLED = 'forged-unlabelled';
const OPTED_IN = 'forged-opted-in';
/** Where the markers live: GETs this file makes itself, to know when the metrics have caught up. */
const MARKERS = OPTED_IN;
const APP = 'app';

const file = e2eFile([`--namespace=${OWN}`], {
  async setup({ e2e }) {
    const objectsIn = (ns: string) => [
      configMap(ns, `${APP}-config`, { 'app.yaml': 'port: 8080' }),
      secret(ns, `${APP}-secret`, { password: 'not-for-you' }),
    ];
    await e2e.k(
      ['apply', '-f', '-'],
      yamlDocuments(
        namespace(OWN, 'true'),
        namespace(UNLABELLED),
        namespace(OPTED_IN, 'true'),
        ...[OWN, UNLABELLED, OPTED_IN, 'kube-system'].flatMap(objectsIn),
        configMap(MARKERS, 'marker', { k: 'v' }),
        secret(MARKERS, 'marker', { k: 'v' }),
      ),
    );
  },
  // kube-system was there before: what this file made in it is its own to remove.
  async teardown() {
    await file.e2e.k([
      'delete',
      '-n',
      'kube-system',
      `configmap/${APP}-config`,
      `secret/${APP}-secret`,
      '--ignore-not-found',
    ]);
  },
});

/** The apiserver's count of GETs of one resource, every code, scope and client summed. */
async function apiserverGets(): Promise<{ secrets: number; configmaps: number }> {
  const text = await file.e2e.k(['get', '--raw', '/metrics']);
  const count = (resource: string) =>
    text
      .split('\n')
      .filter(
        (line) =>
          line.startsWith('apiserver_request_total{') &&
          line.includes('verb="GET"') &&
          line.includes(`resource="${resource}"`) &&
          line.includes('subresource=""'),
      )
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return { secrets: count('secrets'), configmaps: count('configmaps') };
}

/**
 * The GETs of Secrets and ConfigMaps that `act` caused, besides one of each this
 * file makes afterwards (the markers): the metrics are read until the markers
 * show, so that a read of the webhook's, answered before `act` returned, shows too.
 */
async function getsDuring(
  act: () => Promise<void>,
): Promise<{ secrets: number; configmaps: number }> {
  const before = await apiserverGets();
  await act();
  await file.e2e.k(['get', '-n', MARKERS, 'secret/marker', 'configmap/marker', '-o', 'name']);
  for (let attempt = 0; ; attempt++) {
    const after = await apiserverGets();
    const delta = {
      secrets: after.secrets - before.secrets - 1,
      configmaps: after.configmaps - before.configmaps - 1,
    };
    if ((delta.secrets >= 0 && delta.configmaps >= 0) || attempt === 20) return delta;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An AdmissionReview as the apiserver would send it, POSTed by someone else, straight to the port. */
async function postForged(ns: string) {
  const { webhook } = file.e2e;
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `forged-${ns}`,
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      name: APP,
      namespace: ns,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:somewhere:curious' },
      object: workload(ns, APP),
      oldObject: null,
      dryRun: false,
    },
  };
  const answer = await httpRequest(`https://127.0.0.1:${webhook.port}/mutate?timeout=5s`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(review),
    ca: await readFile(join(webhook.certsDir, 'ca.crt')),
    timeoutMs: 10_000,
  });
  expect(answer.status).toBe(200);
  return (
    JSON.parse(answer.body) as {
      response: { uid: string; allowed: boolean; patch?: string; warnings?: string[] };
    }
  ).response;
}

describe('a forged review straight to the port reads nothing where the namespace is not opted in', () => {
  it.each([
    ['kube-system', 'kube-system'],
    ['a namespace without the label', UNLABELLED],
    ["the webhook's own namespace, labelled", OWN],
  ])('%s: allowed, no patch, no Secret or ConfigMap GET', async (_, ns) => {
    let response: Awaited<ReturnType<typeof postForged>> | undefined;
    const gets = await getsDuring(async () => {
      response = await postForged(ns);
    });
    expect(gets).toEqual({ secrets: 0, configmaps: 0 });
    expect(response).toEqual({ uid: `forged-${ns}`, allowed: true });
  });

  it('the control: for an opted-in namespace the same review reads both, and the metrics show it', async () => {
    let response: Awaited<ReturnType<typeof postForged>> | undefined;
    const gets = await getsDuring(async () => {
      response = await postForged(OPTED_IN);
    });
    expect(response?.patch).toBeDefined();
    expect(gets.secrets).toBeGreaterThanOrEqual(1);
    expect(gets.configmaps).toBeGreaterThanOrEqual(1);
  });

  it('the webhook counts them as skipped: namespace-not-opted-in', async () => {
    const { webhook } = file.e2e;
    const metrics = await httpRequest(`https://127.0.0.1:${webhook.port}/metrics`, {
      ca: await readFile(join(webhook.certsDir, 'ca.crt')),
    });
    expect(metrics.body).toMatch(
      /^confighash_admission_skips_total\{reason="namespace-not-opted-in"\} 3$/m,
    );
  });
});
