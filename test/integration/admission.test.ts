// buildApp() + inject with the real Kubernetes adapter against a real HTTP
// server that speaks the API's paths and Status errors: every docs/design.md §4 row
// over HTTP, and every bad input.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import type { Mutator } from '../../src/admission/result.js';
import { createApiConfigSource } from '../../src/kube/index.js';
import { HASH, PREVIOUS_KEY_WARNING, SOURCES } from '../../src/workload/index.js';
import { HASH_KEY, putStandardSources, startTestApp, type TestApp } from '../support/app.js';
import { applyPatch, decodePatch } from '../support/json-patch.js';
import { everyNamespaceOptedIn } from '../support/namespaces.js';
import { admissionReview, NAMESPACE, type RequestOptions, workload } from '../support/workloads.js';

interface ReviewResponse {
  apiVersion: string;
  kind: string;
  response: {
    uid: string;
    allowed: boolean;
    patchType?: string;
    patch?: string;
    warnings?: string[];
  };
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});
beforeEach(() => {
  putStandardSources(t.api, NAMESPACE);
  for (const name of ['app-config', 'flags']) t.api.fault('ConfigMap', NAMESPACE, name, undefined);
  t.api.fault('Secret', NAMESPACE, 'db', undefined);
});

async function post(options: RequestOptions, query = '') {
  const response = await t.app.inject({
    method: 'POST',
    url: `/mutate${query}`,
    payload: admissionReview(options),
  });
  const body = response.json() as ReviewResponse;
  const object = admissionReview(options).request as { object: unknown };
  const after = applyPatch(object.object, decodePatch(body.response.patch));
  return { response, body, after: after as ReturnType<typeof workload> };
}

/** A sample's value in /metrics; 0 when absent. `name` may include its labels. */
async function metricValue(name: string): Promise<number> {
  const text = (await t.app.inject('/metrics')).body;
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

function templateAnnotations(object: ReturnType<typeof workload>): Record<string, string> {
  return ((object.spec as { template: { metadata: { annotations?: Record<string, string> } } })
    .template.metadata.annotations ?? {}) as Record<string, string>;
}

describe('well-formed reviews', () => {
  it('CREATE: allowed, uid echoed, JSONPatch sets hash and sources', async () => {
    const { response, body, after } = await post({ uid: 'e5a8c4e2-1' });
    expect(response.statusCode).toBe(200);
    expect(body.apiVersion).toBe('admission.k8s.io/v1');
    expect(body.kind).toBe('AdmissionReview');
    expect(body.response.uid).toBe('e5a8c4e2-1');
    expect(body.response.allowed).toBe(true);
    expect(body.response.patchType).toBe('JSONPatch');
    expect(templateAnnotations(after)[HASH]).toMatch(/^[0-9a-f]{64}$/);
    expect(templateAnnotations(after)[SOURCES]).toBe(
      'configmap/app-config,configmap/flags,secret/db',
    );
  });

  it('a second review of the patched object has no patch', async () => {
    const { after } = await post({});
    const { body } = await post({ object: after });
    expect(body.response.patch).toBeUndefined();
    expect(body.response.patchType).toBeUndefined();
  });

  it('a changed Secret gives a new hash on UPDATE', async () => {
    const { after: old } = await post({});
    t.api.put({ kind: 'Secret', namespace: NAMESPACE, name: 'db', data: { password: 'bmV3' } });
    const { after } = await post({ operation: 'UPDATE', object: old, oldObject: old });
    expect(templateAnnotations(after)[HASH]).not.toBe(templateAnnotations(old)[HASH]);
  });

  it('adoption: first UPDATE of a never-hashed workload writes adopted-hash on the workload only', async () => {
    const plain = workload();
    const { after } = await post({ operation: 'UPDATE', object: plain, oldObject: plain });
    expect(templateAnnotations(after)).toEqual({});
    expect(
      (after.metadata as { annotations: Record<string, string> }).annotations[
        'confighash.dev/adopted-hash'
      ],
    ).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a required ConfigMap missing on CREATE: hashed as absent, with a warning', async () => {
    t.api.remove('ConfigMap', NAMESPACE, 'app-config');
    const { body, after } = await post({});
    expect(templateAnnotations(after)[HASH]).toMatch(/^[0-9a-f]{64}$/);
    expect(body.response.warnings).toEqual([
      'confighash: ConfigMap app-config not found; pods will not start until it exists',
    ]);
  });

  it.each([
    ['forbidden', 'forbidden'],
    ['server-error', 'HTTP 500'],
    ['not-json', 'response is not JSON'],
    // A 200 whose body is not a JSON object is not an empty Secret.
    ['array', 'response is not an object'],
    ['data-not-object', 'response data is not an object'],
  ] as const)('a lookup answered %s keeps oldObject values on UPDATE', async (fault, detail) => {
    const { after: old } = await post({});
    t.api.fault('Secret', NAMESPACE, 'db', fault);
    const { body, after } = await post({ operation: 'UPDATE', object: workload(), oldObject: old });
    expect(templateAnnotations(after)).toEqual(templateAnnotations(old));
    expect(body.response.warnings).toEqual([
      `confighash: could not read Secret db (${detail}); kept the previous hash`,
    ]);
  });

  it('a lookup that never answers ends at the deadline from ?timeout=, before the apiserver gives up', async () => {
    const { after: old } = await post({});
    t.api.fault('ConfigMap', NAMESPACE, 'flags', 'hang');
    const started = Date.now();
    const { body, after } = await post(
      { operation: 'UPDATE', object: workload(), oldObject: old },
      '?timeout=2s',
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(2000);
    expect(templateAnnotations(after)).toEqual(templateAnnotations(old));
    expect(body.response.warnings).toEqual([
      'confighash: could not read ConfigMap flags (timed out); kept the previous hash',
    ]);
  });

  it('an absurd ?timeout= is clamped: lookups still run, no internal error', async () => {
    const { body } = await post({}, '?timeout=99999999999h');
    expect(body.response.patch).toBeDefined();
    expect(body.response.warnings).toBeUndefined();
  });

  it('a template nested thousands of levels deep is reviewed, not an internal error', async () => {
    // Built as text: JSON.stringify of such an object overflows the stack itself.
    const depth = 20_000;
    const deep = `${'{"nested":'.repeat(depth)}true${'}'.repeat(depth)}`;
    const send = async (options: RequestOptions) => {
      const text = JSON.stringify(admissionReview(options)).replaceAll('"DEEP"', deep);
      const response = await t.app.inject({
        method: 'POST',
        url: '/mutate',
        payload: text,
        headers: { 'content-type': 'application/json' },
      });
      return { status: response.statusCode, body: response.json() as ReviewResponse };
    };
    const object = workload();
    const spec = object.spec as { template: { spec: { containers: Record<string, unknown>[] } } };
    spec.template.spec.containers[0]!.extra = 'DEEP';
    const created = await send({ object });
    expect(created.status).toBe(200);
    expect(created.body.response.warnings).toBeUndefined();
    expect(created.body.response.patch).toBeDefined();
    // UPDATE compares the two templates ("otherwise unchanged"), all the way down.
    const update = await send({ operation: 'UPDATE', object, oldObject: object });
    expect(update.status).toBe(200);
    expect(update.body.response.warnings).toBeUndefined();
    expect(decodePatch(update.body.response.patch)).toEqual([
      expect.objectContaining({ path: '/metadata/annotations' }),
    ]);
  });

  it('dry-run is computed like a real request', async () => {
    const real = await post({});
    const dry = await post({ dryRun: true });
    expect(dry.body.response.patch).toBe(real.body.response.patch);
  });

  it('dry-run of a rolling UPDATE: same patch, but no hash change counted and nothing written', async () => {
    const { after: old } = await post({});
    t.api.put({ kind: 'ConfigMap', namespace: NAMESPACE, name: 'flags', data: { mode: 'dry' } });
    const update = { operation: 'UPDATE', object: old, oldObject: old } as const;
    const dryRuns = 'confighash_admission_requests_total{outcome="patched",dry_run="true"}';
    const changesBefore = await metricValue('confighash_hash_changes_total');
    const dryRunsBefore = await metricValue(dryRuns);
    const requestsBefore = t.api.requests.length;
    const dry = await post({ ...update, dryRun: true });
    expect(dry.body.response.patch).toBeDefined();
    expect(await metricValue('confighash_hash_changes_total')).toBe(changesBefore);
    expect(await metricValue(dryRuns)).toBe(dryRunsBefore + 1);
    // Its only traffic to the API server is the live reads.
    expect(t.api.requests.slice(requestsBefore).every((r) => r.startsWith('GET '))).toBe(true);
    // The same write for real is counted: the check above can fail.
    const real = await post(update);
    expect(real.body.response.patch).toBe(dry.body.response.patch);
    expect(await metricValue('confighash_hash_changes_total')).toBe(changesBefore + 1);
  });

  it.each([
    ['DELETE', { operation: 'DELETE' }],
    ['a subresource', { operation: 'UPDATE', subResource: 'status', oldObject: workload() }],
    ['another kind', { kind: { group: '', version: 'v1', kind: 'Pod' } }],
    [
      'an opted-out workload',
      { object: workload({ annotations: { 'confighash.dev/enabled': 'false' } }) },
    ],
  ] as [string, RequestOptions][])(
    '%s: allowed without a patch or lookup',
    async (_name, options) => {
      const before = t.api.requests.length;
      const { body } = await post(options);
      expect(body.response).toEqual({ uid: 'uid-1', allowed: true });
      expect(t.api.requests.length).toBe(before);
    },
  );

  it('reuses keep-alive connections to the API server', async () => {
    const connectionsBefore = t.api.connections;
    const requestsBefore = t.api.requests.length;
    for (let i = 0; i < 30; i++) await post({});
    await Promise.all(Array.from({ length: 10 }, () => post({})));
    expect(t.api.requests.length - requestsBefore).toBe(120);
    // 3 parallel GETs per review, 10 reviews at once: at most 30 sockets, never 120.
    expect(t.api.connections - connectionsBefore).toBeLessThanOrEqual(30);
  });

  it('sends the kubeconfig credentials with every lookup', async () => {
    const before = t.api.authorizations.length;
    await post({});
    const sent = t.api.authorizations.slice(before);
    expect(sent).toEqual(['Bearer fake-token', 'Bearer fake-token', 'Bearer fake-token']);
  });
});

describe('bad input', () => {
  it.each([
    ['an empty body', '', 'application/json', 400],
    ['a truncated body', '{', 'application/json', 400],
    ['a JSON array', '[]', 'application/json', 400],
    ['not an AdmissionReview', '{"apiVersion":"v1","kind":"Pod"}', 'application/json', 400],
    [
      'AdmissionReview v1beta1',
      '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}',
      'application/json',
      400,
    ],
    [
      'no request',
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}',
      'application/json',
      400,
    ],
    [
      'a request without uid',
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"CREATE"}}',
      'application/json',
      400,
    ],
    ['text/plain', '{}', 'text/plain', 415],
    ['application/yaml', 'a: b', 'application/yaml', 415],
  ])(
    '%s gives %s… with a one-line reason and no stack',
    async (_name, payload, contentType, status) => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/mutate',
        payload,
        headers: { 'content-type': contentType },
      });
      expect(response.statusCode).toBe(status);
      const body = response.json() as { error: string };
      expect(body.error).toMatch(/\S/);
      expect(body.error).not.toContain('\n');
      expect(response.body).not.toMatch(/at .*\.(ts|js):\d+/);
    },
  );

  it('a body over 7 MiB is 413', async () => {
    const review = admissionReview({});
    (review.request as Record<string, unknown>).padding = 'x'.repeat(7 * 1024 * 1024);
    const response = await t.app.inject({ method: 'POST', url: '/mutate', payload: review });
    expect(response.statusCode).toBe(413);
  });

  it('a body of two 3 MiB objects is accepted', async () => {
    const big = workload({ annotations: { blob: 'y'.repeat(3 * 1024 * 1024 - 1000) } });
    const review = admissionReview({ operation: 'UPDATE', object: big, oldObject: big });
    const response = await t.app.inject({ method: 'POST', url: '/mutate', payload: review });
    expect(response.statusCode).toBe(200);
    expect((response.json() as ReviewResponse).response.allowed).toBe(true);
  });
});

// docs/security.md "Rotate the hash key": the webhook restarted with a new current key and
// the old one as a previous key; the workload carries the old key's hash.
describe('a hash made with a previous key', () => {
  const PREVIOUS_KEY_HASHES = 'confighash_previous_key_hashes_total{component="admission"}';

  it('is kept with a warning; a write counts it, a dry run does not', async () => {
    const { after: old } = await post({});
    const rotated = await startTestApp({
      mutator: createMutator({
        configSource: createApiConfigSource(t.connection),
        hashKey: Buffer.alloc(32, 0xee),
        previousHashKeys: [HASH_KEY],
        namespaces: everyNamespaceOptedIn,
      }),
    });
    try {
      const count = async () => {
        const text = (await rotated.app.inject('/metrics')).body;
        const line = text.split('\n').find((entry) => entry.startsWith(`${PREVIOUS_KEY_HASHES} `));
        return line === undefined ? 0 : Number(line.slice(PREVIOUS_KEY_HASHES.length + 1));
      };
      const send = async (dryRun: boolean) => {
        const response = await rotated.app.inject({
          method: 'POST',
          url: '/mutate',
          payload: admissionReview({ operation: 'UPDATE', object: old, oldObject: old, dryRun }),
        });
        return (response.json() as ReviewResponse).response;
      };
      const dry = await send(true);
      expect(dry.patch).toBeUndefined();
      expect(dry.warnings).toEqual([PREVIOUS_KEY_WARNING]);
      expect(await count()).toBe(0);
      const real = await send(false);
      expect(real.patch).toBeUndefined();
      expect(await count()).toBe(1);
    } finally {
      await rotated.close();
    }
  });
});

describe('a bug in the mutator', () => {
  it('is recovered: the write is allowed unchanged, with a warning, and logged', async () => {
    const broken: Mutator = {
      review: () => Promise.reject(new Error('boom')),
    };
    const other = await startTestApp({ mutator: broken });
    try {
      const response = await other.app.inject({
        method: 'POST',
        url: '/mutate',
        payload: admissionReview({ uid: 'u-9' }),
      });
      expect(response.statusCode).toBe(200);
      expect((response.json() as ReviewResponse).response).toEqual({
        uid: 'u-9',
        allowed: true,
        warnings: ['confighash: internal error; no hash written'],
      });
      expect(
        other.logs.some((line) => line.includes('"level":"error"') && line.includes('boom')),
      ).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe('health, readiness and metrics', () => {
  it('healthz is always ok; readyz follows readiness', async () => {
    expect((await t.app.inject('/healthz')).statusCode).toBe(200);
    expect((await t.app.inject('/readyz')).statusCode).toBe(200);
    t.ready.value = false;
    expect((await t.app.inject('/readyz')).statusCode).toBe(503);
    t.ready.value = true;
  });

  it('counts requests by outcome, lookups by result, latency and hash changes', async () => {
    const { after: old } = await post({});
    t.api.put({ kind: 'ConfigMap', namespace: NAMESPACE, name: 'flags', data: { mode: 'slow' } });
    await post({ operation: 'UPDATE', object: old, oldObject: old });
    t.api.remove('ConfigMap', NAMESPACE, 'app-config');
    await post({});
    await t.app.inject({
      method: 'POST',
      url: '/mutate',
      payload: '{',
      headers: { 'content-type': 'application/json' },
    });
    const text = (await t.app.inject('/metrics')).body;
    expect(text).toMatch(
      /confighash_admission_requests_total\{outcome="patched",dry_run="false"\} [1-9]/,
    );
    expect(text).toMatch(
      /confighash_admission_requests_total\{outcome="invalid",dry_run="false"\} [1-9]/,
    );
    expect(text).toMatch(/confighash_lookups_total\{kind="ConfigMap",result="found"\} [1-9]/);
    expect(text).toMatch(/confighash_lookups_total\{kind="ConfigMap",result="absent"\} [1-9]/);
    expect(text).toMatch(/confighash_hash_changes_total [1-9]/);
    expect(text).toMatch(
      /confighash_admission_duration_seconds_bucket\{le="0.005",outcome="patched"\}/,
    );
  });
});

describe('logs', () => {
  it('name the review and never contain a Secret or ConfigMap value', async () => {
    await post({ uid: 'log-uid' });
    const line = t.logs.find((entry) => entry.includes('log-uid'));
    expect(line).toBeDefined();
    const parsed = JSON.parse(line!) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      uid: 'log-uid',
      kind: 'Deployment',
      namespace: NAMESPACE,
      name: 'web',
      operation: 'CREATE',
      dryRun: false,
    });
    expect(typeof parsed.durationMs).toBe('number');
    const all = t.logs.join('\n');
    expect(all).not.toContain('hunter2-secret-value');
    expect(all).not.toContain(Buffer.from('hunter2-secret-value').toString('base64'));
    expect(all).not.toContain('port: 8080');
  });
});
