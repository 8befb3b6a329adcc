#!/usr/bin/env node
// The composition root, with src/main/: the only place that reads flags and the
// environment, opens files, builds real adapters, listens and handles signals.
// This file picks the command and turns its failure into one line and an exit code.

import { readFileSync } from 'node:fs';
import { COMMANDS, parseFollowCommandConfig, parseServeConfig, usage } from './config/index.js';
import { devCerts } from './main/dev-certs.js';
import { asUsageError, UsageError, unwrap } from './main/errors.js';
import { follow } from './main/follow.js';
import { explain, plan } from './main/preview.js';
import { serve } from './main/serve.js';

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      await serve(unwrap(parseServeConfig(rest, process.env)));
      return 0;
    case 'follow':
      await follow(unwrap(parseFollowCommandConfig(rest, process.env)));
      return 0;
    case 'dev-certs':
      await devCerts(rest);
      return 0;
    case 'plan':
      return plan(rest).catch(asUsageError);
    case 'explain':
      return explain(rest).catch(asUsageError);
    case 'help':
      if (rest[0] !== undefined) return main([rest[0], '--help']);
      process.stdout.write(`${usage()}\n`);
      return 0;
    case '--version':
    case 'version':
      process.stdout.write(`${packageVersion()}\n`);
      return 0;
    case undefined:
    case '--help':
    case '-h':
      process.stdout.write(`${usage()}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(
        `unknown command '${command}' (commands: ${COMMANDS.map((known) => known.name).join(', ')}; see --help)`,
      );
  }
}

/** package.json's version: beside src/ when run from source, beside dist/ once installed. */
function packageVersion(): string {
  const file = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`confighash: ${error.message}\n`);
      process.exit(2);
    }
    // System errors (EADDRINUSE, EACCES, ...) are the user's to fix: one line.
    const systemError = error instanceof Error && 'code' in error;
    const text = systemError ? error.message : ((error as Error).stack ?? String(error));
    process.stderr.write(`confighash: ${text}\n`);
    process.exit(1);
  },
);
