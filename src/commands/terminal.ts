// What the commands that print for people ask of the terminal.

/** Colour only on a terminal, and never with NO_COLOR set. */
export function useColor(): boolean {
  return process.stdout.isTTY === true && !process.env.NO_COLOR;
}
