// Response builders, so that no handler assembles an envelope by hand. There is
// deliberately no `denied`: confighash never blocks a write.

import type { AdmissionResponse, AdmissionReviewResponse } from './review-types.js';

export function allowed(uid: string, warnings: readonly string[] = []): AdmissionReviewResponse {
  return envelope({ uid, allowed: true, ...warningsField(warnings) });
}

export function patched(
  uid: string,
  patch: readonly unknown[],
  warnings: readonly string[] = [],
): AdmissionReviewResponse {
  if (patch.length === 0) return allowed(uid, warnings);
  return envelope({
    uid,
    allowed: true,
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    ...warningsField(warnings),
  });
}

function warningsField(warnings: readonly string[]): { warnings?: readonly string[] } {
  return warnings.length > 0 ? { warnings } : {};
}

function envelope(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
