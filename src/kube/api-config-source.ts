// ConfigSource over the API server: a live GET per object, in parallel, over
// the connection's keep-alive agent. 404 means absent; anything else that is
// not a 200 is a failure with a short reason for the warning.

import http from 'node:http';
import https from 'node:https';
import { contentOfConfigMap, contentOfSecret, type SourceKind } from '../hash/index.js';
import type { ConfigSource, LookupFailure, LookupResult } from './config-source.js';
import type { ApiConnection } from './connection.js';

const RESOURCE: Readonly<Record<SourceKind, string>> = {
  ConfigMap: 'configmaps',
  Secret: 'secrets',
};

export function createApiConfigSource(connection: ApiConnection): ConfigSource {
  const transport = connection.server.protocol === 'https:' ? https : http;
  const basePath = connection.server.pathname.replace(/\/$/, '');
  const abortOnDeadline = deadlineTracker();
  return {
    async get(kind, namespace, name, signal) {
      if (signal.aborted) return failed('timeout', 'deadline reached');
      const path = `${basePath}/api/v1/namespaces/${encodeURIComponent(namespace)}/${RESOURCE[kind]}/${encodeURIComponent(name)}`;
      const headers = { ...(await connection.headers()), accept: 'application/json' };
      if (signal.aborted) return failed('timeout', 'deadline reached');
      return new Promise<LookupResult>((resolve) => {
        const request = transport.request(
          {
            protocol: connection.server.protocol,
            hostname: connection.server.hostname,
            port: connection.server.port,
            path,
            method: 'GET',
            agent: connection.agent,
            headers,
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('error', (error) => resolve(fromError(error, signal)));
            response.on('end', () => {
              resolve(interpret(kind, response.statusCode ?? 0, Buffer.concat(chunks)));
            });
          },
        );
        request.on('error', (error) => resolve(fromError(error, signal)));
        abortOnDeadline(signal, request);
        request.end();
      });
    },
  };
}

/**
 * Destroys a deadline's requests still in flight when it passes. One abort
 * listener per deadline, shared by the lookups of a review: the `signal` option
 * of http.request adds and removes one per request, which the bench measured
 * at ~5 µs of CPU per GET (BENCHMARKS.md).
 */
function deadlineTracker(): (signal: AbortSignal, request: http.ClientRequest) => void {
  const inFlight = new WeakMap<AbortSignal, Set<http.ClientRequest>>();
  return (signal, request) => {
    let requests = inFlight.get(signal);
    if (requests === undefined) {
      const tracked = new Set<http.ClientRequest>();
      requests = tracked;
      inFlight.set(signal, tracked);
      signal.addEventListener(
        'abort',
        () => {
          for (const pending of tracked) pending.destroy(abortError());
          tracked.clear();
        },
        { once: true },
      );
    }
    const tracked = requests;
    tracked.add(request);
    request.once('close', () => tracked.delete(request));
  };
}

function abortError(): Error {
  const error = new Error('the lookup deadline passed');
  error.name = 'AbortError';
  return error;
}

function interpret(kind: SourceKind, status: number, body: Buffer): LookupResult {
  if (status === 404) return { status: 'absent' };
  if (status === 403) return failed('forbidden', 'forbidden');
  if (status === 401) return failed('unauthorized', 'unauthorized');
  if (status !== 200) return failed('server-error', `HTTP ${status}`);
  let object: unknown;
  try {
    object = JSON.parse(body.toString('utf8'));
  } catch {
    return failed('bad-response', 'response is not JSON');
  }
  if (typeof object !== 'object' || object === null) {
    return failed('bad-response', 'response is not an object');
  }
  const { metadata, data, binaryData } = object as {
    metadata?: { uid?: unknown; resourceVersion?: unknown };
    data?: Record<string, string>;
    binaryData?: Record<string, string>;
  };
  return {
    status: 'found',
    uid: String(metadata?.uid ?? ''),
    resourceVersion: String(metadata?.resourceVersion ?? ''),
    content:
      kind === 'ConfigMap' ? contentOfConfigMap({ data, binaryData }) : contentOfSecret({ data }),
  };
}

function fromError(error: Error & { code?: string }, signal: AbortSignal): LookupResult {
  if (signal.aborted || error.name === 'AbortError') return failed('timeout', 'timed out');
  return failed('network', error.code ?? error.message);
}

function failed(failure: LookupFailure, detail: string): LookupResult {
  return { status: 'failed', failure, detail };
}
