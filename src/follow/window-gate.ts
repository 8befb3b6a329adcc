// Whether a touch may run now under a rollout window (docs/design.md §6). Pure:
// the window text and the time in, open or held (until when, and why) out.

import { isWindowOpen, nextWindowOpening, parseRolloutWindow, warning } from '../workload/index.js';

export type WindowGate =
  | { readonly open: true }
  | {
      readonly open: false;
      readonly until: Date;
      /** The Event note: names the window, never content. */
      readonly note: string;
      /** false when the window text cannot be read: the change is held, and that is a warning. */
      readonly valid: boolean;
    };

/**
 * `retryMs` is how long to hold when no opening can be computed (an unreadable
 * window, or one that never opens): the touch is looked at again then.
 */
export function gateWindow(text: string | undefined, now: Date, retryMs: number): WindowGate {
  if (text === undefined) return { open: true };
  const parsed = parseRolloutWindow(text);
  if (!parsed.ok) {
    // Never roll outside what the user meant: hold the change and say why.
    const until = new Date(now.getTime() + retryMs);
    return {
      open: false,
      until,
      note: warning(`${parsed.error}; config change held`),
      valid: false,
    };
  }
  if (isWindowOpen(parsed.window, now)) return { open: true };
  const until = nextWindowOpening(parsed.window, now) ?? new Date(now.getTime() + retryMs);
  const note = warning(
    `config change held until ${until.toISOString()} (window ${parsed.window.text})`,
  );
  return { open: false, until, note, valid: true };
}
