#!/usr/bin/env node
// The composition root, with src/commands/: the only place that reads flags and the
// environment, opens files, builds real adapters, listens and handles signals.
// This file picks the command and turns its failure into one line and an exit code. Each
// command's modules load when it runs: a plan need not load the server, nor a server the CLI's.

import {
  BARE_COMMANDS,
  COMMANDS,
  commandHelp,
  completion,
  parseFollowCommandConfig,
  parseServeConfig,
  splitCommand,
  usage,
} from './cli/index.js';
import { asUsageError, UsageError, unwrap } from './commands/errors.js';
import { packageVersion } from './commands/package-version.js';

async function main(argv: readonly string[]): Promise<number> {
  const { command, rest } = splitCommand(argv);
  switch (command) {
    case 'serve': {
      const config = unwrap(parseServeConfig(rest, process.env));
      await (await import('./commands/serve-command.js')).serve(config);
      return 0;
    }
    case 'follow': {
      const config = unwrap(parseFollowCommandConfig(rest, process.env));
      await (await import('./commands/follow-command.js')).follow(config);
      return 0;
    }
    case 'dev-certs':
      await (await import('./commands/dev-certs-command.js')).devCerts(rest);
      return 0;
    case 'plan':
      return (await import('./commands/plan-command.js')).plan(rest).catch(asUsageError);
    case 'explain':
      return (await import('./commands/explain-command.js')).explain(rest).catch(asUsageError);
    case 'doctor':
      return (await import('./commands/doctor-command.js')).doctor(rest).catch(asUsageError);
    case 'completion': {
      if (rest[0] === '--help' || rest[0] === '-h') return main(['help', 'completion']);
      const answer = completion(rest[0]);
      if ('error' in answer) throw new UsageError(answer.error);
      process.stdout.write(answer.script);
      return 0;
    }
    case 'halt':
    case 'resume':
      return (await import('./commands/fanout-control-command.js'))
        .fanoutControl(command, rest)
        .catch(asUsageError);
    case 'help': {
      const help = rest[0] === undefined ? usage() : commandHelp(rest[0]);
      if (help === undefined) return main([rest[0]!, '--help']);
      process.stdout.write(`${help}\n`);
      return 0;
    }
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
        `unknown command '${command}' (commands: ${[...COMMANDS, ...BARE_COMMANDS].map((known) => known.name).join(', ')}; see --help)`,
      );
  }
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
