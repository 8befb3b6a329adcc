// The child side of the bench's IPC: a forked process answers `{ id, type, ...}`
// messages from the orchestrator with `{ id, ok, result | error }`.

export type Handler = (message: Record<string, unknown>) => unknown;

export function serveRequests(handlers: Readonly<Record<string, Handler>>): void {
  if (!process.send) throw new Error('this bench process must be started with an IPC channel');
  process.on('message', (raw) => {
    const message = raw as Record<string, unknown> & { id: number; type: string };
    const handler = handlers[message.type];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown request ${message.type}`);
        return handler(message);
      })
      .then(
        (result) => process.send?.({ id: message.id, ok: true, result }),
        (error: Error) => process.send?.({ id: message.id, ok: false, error: error.message }),
      );
  });
  // The orchestrator going away (even by SIGKILL) closes the channel: follow it.
  process.on('disconnect', () => process.exit(0));
}
