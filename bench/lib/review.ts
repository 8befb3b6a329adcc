// One AdmissionReview sent by hand, as the apiserver would send it: the checks
// that a webhook answers the bench workload before any load or timed write.

import { httpRequest } from '../../tools/cluster/http.js';

export interface ReviewAnswer {
  readonly allowed: boolean;
  /** The decoded JSON patch ('' when there is none). */
  readonly patch: string;
  /** The raw answer, for error messages. */
  readonly text: string;
}

export async function postReview(url: string, body: string, ca: string): Promise<ReviewAnswer> {
  const { body: text } = await httpRequest(url, {
    method: 'POST',
    ca,
    headers: { 'content-type': 'application/json' },
    body,
    timeoutMs: 30_000,
  });
  let answer: { allowed?: boolean; patch?: string } | undefined;
  try {
    answer = (JSON.parse(text) as { response?: typeof answer }).response;
  } catch {
    throw new Error(`${url} answered what is not an AdmissionReview: ${text.slice(0, 300)}`);
  }
  return {
    allowed: answer?.allowed === true,
    patch: answer?.patch ? Buffer.from(answer.patch, 'base64').toString() : '',
    text,
  };
}

/** Throws unless `url` allows the review with a patch that writes `annotation`. */
export async function checkReview(
  url: string,
  body: string,
  ca: string,
  annotation: string,
): Promise<void> {
  const answer = await postReview(url, body, ca);
  // A JSON patch path escapes '/' as '~1'; a patch of the whole annotations map has it plain.
  const written = [annotation, annotation.replace('/', '~1')].some((key) =>
    answer.patch.includes(key),
  );
  if (!answer.allowed || !written) {
    throw new Error(
      `${url} did not answer with a patch of ${annotation}: ${answer.text.slice(0, 300)}`,
    );
  }
}
