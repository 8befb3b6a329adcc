// Validates an untrusted request body into an AdmissionRequest. Every failure
// is one line naming the first thing that is wrong; the caller answers 400.

import type { GroupVersionKind } from '../workload/index.js';
import type { AdmissionRequest, Operation } from './review-types.js';

type DecodeResult =
  | { readonly ok: true; readonly request: AdmissionRequest }
  | { readonly ok: false; readonly error: string };

const OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

export function decodeAdmissionReview(body: unknown): DecodeResult {
  if (!isRecord(body)) return fail('body is not a JSON object');
  if (body.apiVersion !== 'admission.k8s.io/v1') {
    return fail(`apiVersion must be admission.k8s.io/v1, got ${describe(body.apiVersion)}`);
  }
  if (body.kind !== 'AdmissionReview') {
    return fail(`kind must be AdmissionReview, got ${describe(body.kind)}`);
  }
  const request = body.request;
  if (!isRecord(request)) return fail('AdmissionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '') return fail('request.uid is missing');
  const kind = decodeGroupVersionKind(request.kind);
  if (!kind) return fail('request.kind must have string group, version and kind');
  if (typeof request.operation !== 'string' || !OPERATIONS.has(request.operation)) {
    return fail(`request.operation ${describe(request.operation)} is not a known operation`);
  }
  return {
    ok: true,
    request: {
      uid: request.uid,
      kind,
      subResource: optionalString(request.subResource),
      name: optionalString(request.name),
      namespace: optionalString(request.namespace),
      operation: request.operation as Operation,
      dryRun: request.dryRun === true,
      object: request.object ?? undefined,
      oldObject: request.oldObject ?? undefined,
    },
  };
}

function decodeGroupVersionKind(value: unknown): GroupVersionKind | undefined {
  if (!isRecord(value)) return undefined;
  const { group, version, kind } = value;
  if (typeof group !== 'string' || typeof version !== 'string' || typeof kind !== 'string') {
    return undefined;
  }
  return { group, version, kind };
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(error: string): DecodeResult {
  return { ok: false, error };
}
