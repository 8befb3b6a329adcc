// The parts of admission.k8s.io/v1 AdmissionReview that confighash reads and writes.

import type { GroupVersionKind } from '../workload/index.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly subResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: Operation;
  readonly dryRun: boolean;
  /** The object as it would be stored; absent for DELETE. */
  readonly object?: unknown;
  /** The stored object before this write; present for UPDATE. */
  readonly oldObject?: unknown;
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: true;
  readonly patchType?: 'JSONPatch';
  /** base64 of the JSONPatch document. */
  readonly patch?: string;
  readonly warnings?: readonly string[];
}

export interface AdmissionReviewResponse {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}
