// The self-managed certificates' adapters (src/kube/secrets.ts,
// src/kube/webhook-configuration.ts) and follow mode's fan-out writes and pod reads
// (src/kube/follow-api.ts, docs/design.md §6) over the one request path, against a real
// HTTP server that answers as the API does: paths, field manager, content
// types, 404/409 as outcomes, anything else as one line naming the object.

import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ApiConnection,
  connectToCluster,
  createCaBundleTarget,
  createFollowApi,
  createSecretStore,
} from '../../src/kube/index.js';
import { credentialsFromText } from '../support/credentials.js';
import { kubeconfigFor } from '../support/fake-api.js';

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  body: unknown;
}

type Answer = { status: number; body: unknown };

let server: http.Server;
let connection: ApiConnection;
let seen: Seen[];
let answers: Map<string, Answer>;

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    const key = `${request.method} ${request.url}`;
    seen.push({
      method: request.method ?? '',
      url: request.url ?? '',
      contentType: request.headers['content-type'],
      body: text ? JSON.parse(text) : undefined,
    });
    const answer = answers.get(key) ?? status(404, 'NotFound', 'not found');
    response.writeHead(answer.status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(answer.body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  connection = connectToCluster(await credentialsFromText(kubeconfigFor(url)));
});
afterAll(async () => {
  connection.close();
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  seen = [];
  answers = new Map();
});

function status(code: number, reason: string, message: string): Answer {
  return {
    status: code,
    body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code },
  };
}

const SECRETS = '/api/v1/namespaces/confighash-system/secrets';

describe('SecretStore', () => {
  it('reads a Secret, decoding its data; a 404 is absent', async () => {
    answers.set(`GET ${SECRETS}/certs`, {
      status: 200,
      body: {
        metadata: { resourceVersion: '7' },
        data: { 'tls.crt': Buffer.from('PEM').toString('base64') },
      },
    });
    const store = createSecretStore(connection, 'confighash-system');
    const read = await store.read('certs');
    expect(read?.resourceVersion).toBe('7');
    expect(read?.data['tls.crt']?.toString()).toBe('PEM');
    expect(await store.read('missing')).toBeUndefined();
  });

  it('creates with the field manager and labels; 409 means another replica won', async () => {
    answers.set(`POST ${SECRETS}?fieldManager=confighash`, { status: 201, body: {} });
    const store = createSecretStore(connection, 'confighash-system');
    expect(await store.create('key', 'Opaque', { 'hash.key': Buffer.from('k') })).toBe('created');
    expect(seen[0]).toMatchObject({
      method: 'POST',
      contentType: 'application/json',
      body: {
        kind: 'Secret',
        type: 'Opaque',
        metadata: { name: 'key', labels: { 'app.kubernetes.io/managed-by': 'confighash' } },
        data: { 'hash.key': Buffer.from('k').toString('base64') },
      },
    });
    answers.set(`POST ${SECRETS}?fieldManager=confighash`, status(409, 'AlreadyExists', 'exists'));
    expect(await store.create('key', 'Opaque', {})).toBe('exists');
  });

  it('replaces at a resourceVersion; 409 is a conflict', async () => {
    answers.set(`PUT ${SECRETS}/certs?fieldManager=confighash`, status(409, 'Conflict', 'stale'));
    const store = createSecretStore(connection, 'confighash-system');
    expect(await store.replace('certs', 'kubernetes.io/tls', {}, '7')).toBe('conflict');
    expect(seen[0]?.body).toMatchObject({ metadata: { resourceVersion: '7' } });
  });

  it('anything else is one line naming the Secret and the reason', async () => {
    answers.set(`GET ${SECRETS}/certs`, status(403, 'Forbidden', 'secrets "certs" is forbidden'));
    const store = createSecretStore(connection, 'confighash-system');
    await expect(store.read('certs')).rejects.toThrow(
      'cannot read Secret confighash-system/certs: HTTP 403: secrets "certs" is forbidden',
    );
  });
});

describe('CaBundleTarget', () => {
  const PATH = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/confighash';
  const wanted = Buffer.from('CA PEM').toString('base64');

  it('patches only the webhooks whose caBundle differs, testing each name at its index', async () => {
    answers.set(`GET ${PATH}`, {
      status: 200,
      body: {
        webhooks: [
          { name: 'a.confighash.dev', clientConfig: { caBundle: wanted } },
          { name: 'b.confighash.dev', clientConfig: {} },
        ],
      },
    });
    answers.set(`PATCH ${PATH}?fieldManager=confighash`, { status: 200, body: {} });
    expect(await createCaBundleTarget(connection).ensure('confighash', 'CA PEM')).toBe('patched');
    expect(seen[1]).toEqual({
      method: 'PATCH',
      url: `${PATH}?fieldManager=confighash`,
      contentType: 'application/json-patch+json',
      body: [
        { op: 'test', path: '/webhooks/1/name', value: 'b.confighash.dev' },
        { op: 'add', path: '/webhooks/1/clientConfig/caBundle', value: wanted },
      ],
    });
  });

  it('sends nothing when every caBundle is current; a missing configuration is one line', async () => {
    answers.set(`GET ${PATH}`, {
      status: 200,
      body: { webhooks: [{ name: 'a', clientConfig: { caBundle: wanted } }] },
    });
    expect(await createCaBundleTarget(connection).ensure('confighash', 'CA PEM')).toBe('unchanged');
    expect(seen).toHaveLength(1);
    answers.clear();
    await expect(createCaBundleTarget(connection).ensure('confighash', 'CA PEM')).rejects.toThrow(
      'cannot read MutatingWebhookConfiguration confighash: HTTP 404: not found',
    );
  });
});

describe('FollowApi: the fan-out record and a canary’s pods', () => {
  const CM = '/api/v1/namespaces/shop/configmaps/app';
  const PODS = '/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb&limit=500';
  const write = () =>
    createFollowApi(connection).writeFanoutRecord(
      'shop',
      { kind: 'ConfigMap', name: 'app' },
      '{"change":"0123456789abcdef"}',
      '41',
      new AbortController().signal,
    );

  it('writes the one annotation by a merge patch at the version read, with the field manager', async () => {
    answers.set(`PATCH ${CM}?fieldManager=confighash`, {
      status: 200,
      body: { metadata: { resourceVersion: '42' } },
    });
    expect(await write()).toEqual({ status: 'written', resourceVersion: '42' });
    expect(seen).toEqual([
      {
        method: 'PATCH',
        url: `${CM}?fieldManager=confighash`,
        contentType: 'application/merge-patch+json',
        body: {
          metadata: {
            resourceVersion: '41',
            annotations: { 'confighash.dev/fanout': '{"change":"0123456789abcdef"}' },
          },
        },
      },
    ]);
  });

  it.each([
    [409, 'Conflict', { status: 'conflict' }],
    [404, 'NotFound', { status: 'conflict' }],
    [422, 'Invalid', { status: 'denied', reason: expect.stringContaining('fence says no') }],
  ])('%i is an outcome: %s', async (code, reason, outcome) => {
    answers.set(`PATCH ${CM}?fieldManager=confighash`, status(code, reason, 'fence says no'));
    expect(await write()).toEqual(outcome);
  });

  it('keeps of each pod its name, creation time and container statuses, never its spec', async () => {
    const statuses = [{ name: 'app', restartCount: 1, state: { running: {} } }];
    answers.set(`GET ${PODS}`, {
      status: 200,
      body: {
        metadata: { resourceVersion: '9' },
        items: [
          {
            metadata: {
              name: 'web-1',
              creationTimestamp: '2026-12-07T10:00:00Z',
              labels: { app: 'web' },
            },
            spec: { containers: [{ env: [{ name: 'TOKEN', value: 'secret' }] }] },
            status: { phase: 'Running', containerStatuses: statuses },
          },
        ],
      },
    });
    const pods = await createFollowApi(connection).listPods(
      'shop',
      'app=web',
      new AbortController().signal,
    );
    expect(pods).toEqual([
      {
        metadata: { name: 'web-1', creationTimestamp: '2026-12-07T10:00:00Z' },
        status: { containerStatuses: statuses, initContainerStatuses: undefined },
      },
    ]);
  });
});
