#!/usr/bin/env node
// Reference implementation of `cutoff graphql exec` on graphql-js 16.
//
// Usage:
//   node tests/graphql/diff/runner.mjs --schema S.graphql --fixture F.json \
//        --query Q.graphql [--variables JSON] [--operation NAME] [--deadline-ms N]
//
// Prints the GraphQL response as one line of JSON on stdout and exits 0 (also
// when the response holds errors). Exits 2 on bad usage or unreadable input.
// The fixture/marker format is described in README.md next to this file.
//
// The module also exports runReference() and, when started as a worker thread
// by compare.mjs (workerData.role === 'graphql-diff-reference'), answers
// {id, args} messages with {id, stdout} or {id, error} -- the same code path as
// the command line, minus the process start-up cost.

import { readFileSync, realpathSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import {
  GraphQLError,
  buildSchema,
  execute,
  parse,
  validate,
} from 'graphql';

export const USAGE =
  'usage: runner.mjs --schema S.graphql --fixture F.json --query Q.graphql ' +
  '[--variables JSON] [--operation NAME] [--deadline-ms N]';

export class UsageError extends Error {}

// ---------------------------------------------------------------------------
// Command line -> request

export function parseArgs(argv) {
  const known = new Set([
    '--schema', '--fixture', '--query', '--variables', '--operation', '--deadline-ms',
  ]);
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    let key = argv[i];
    let value;
    const eq = key.indexOf('=');
    if (key.startsWith('--') && eq > 0) {
      value = key.slice(eq + 1);
      key = key.slice(0, eq);
    }
    if (!known.has(key)) throw new UsageError(`unknown argument: ${argv[i]}`);
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`missing value for ${key}`);
      value = argv[++i];
    }
    if (Object.hasOwn(opts, key)) throw new UsageError(`duplicate argument: ${key}`);
    opts[key] = value;
  }
  for (const required of ['--schema', '--fixture', '--query']) {
    if (!Object.hasOwn(opts, required)) throw new UsageError(`missing ${required}`);
  }
  return opts;
}

function readText(path, what) {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${path}: ${e.message}`);
  }
}

// Reads and checks everything named on the command line.
export function loadRequest(opts) {
  const sdl = readText(opts['--schema'], 'schema');
  const fixtureText = readText(opts['--fixture'], 'fixture');
  const queryText = readText(opts['--query'], 'query');

  let fixture;
  try {
    fixture = JSON.parse(fixtureText);
  } catch (e) {
    throw new UsageError(`fixture is not valid JSON: ${e.message}`);
  }
  if (fixture === null || typeof fixture !== 'object' || Array.isArray(fixture)) {
    throw new UsageError('fixture must be a JSON object');
  }

  let variables;
  if (Object.hasOwn(opts, '--variables')) {
    try {
      variables = JSON.parse(opts['--variables']);
    } catch (e) {
      throw new UsageError(`--variables is not valid JSON: ${e.message}`);
    }
    if (variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
      throw new UsageError('--variables must be a JSON object');
    }
  }

  let deadlineMs = null;
  if (Object.hasOwn(opts, '--deadline-ms')) {
    const text = opts['--deadline-ms'];
    if (!/^\d+$/.test(text)) throw new UsageError(`--deadline-ms must be a non-negative integer: ${text}`);
    deadlineMs = Number(text);
  }

  let schema;
  try {
    schema = buildSchema(sdl);
  } catch (e) {
    throw new UsageError(`invalid schema: ${e.message}`);
  }

  return {
    schema,
    fixture,
    queryText,
    variables,
    operationName: Object.hasOwn(opts, '--operation') ? opts['--operation'] : undefined,
    deadlineMs,
  };
}

// ---------------------------------------------------------------------------
// Execution with markers and deadline

function has(obj, key) {
  return Object.hasOwn(obj, key);
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deadlineError() {
  return new GraphQLError('deadline exceeded', {
    extensions: { code: 'DEADLINE_EXCEEDED' },
  });
}

function markerError(marker) {
  const message = String(marker.$error);
  if (has(marker, '$code')) {
    return new GraphQLError(message, { extensions: { code: marker.$code } });
  }
  return new Error(message);
}

function typeResolver(value) {
  if (isPlainObject(value) && typeof value.__typename === 'string') return value.__typename;
  return undefined;
}

// Executes one request; resolves to the response object ({errors} for
// syntax/validation/request errors, {data, errors?} otherwise).
export async function runReference({ schema, fixture, queryText, variables, operationName, deadlineMs }) {
  let deadline = null; // absolute performance.now() value
  let expired = false; // set by the deadline timer
  const timers = new Set();
  const pending = new Set(); // { reject, timer? } for $delay_ms / $hang still running

  const isExpired = () => expired || (deadline !== null && performance.now() >= deadline);

  function startTimer(fn, ms) {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  }

  function onDeadline() {
    expired = true;
    const entries = [...pending];
    pending.clear();
    for (const entry of entries) {
      if (entry.timer !== undefined) {
        clearTimeout(entry.timer);
        timers.delete(entry.timer);
      }
      entry.reject(deadlineError());
    }
  }

  // $delay_ms: resolve to interpret(V) after N ms, or reject at the deadline.
  function delayed(marker, args) {
    if (isExpired()) return Promise.reject(deadlineError());
    const ms = Math.max(0, Number(marker.$delay_ms) || 0);
    const value = has(marker, '$value') ? marker.$value : null;
    return new Promise((resolve, reject) => {
      const entry = { reject };
      entry.timer = startTimer(() => {
        pending.delete(entry);
        try {
          resolve(interpret(value, args, false));
        } catch (e) {
          reject(e);
        }
      }, ms);
      if (deadline !== null) pending.add(entry);
    });
  }

  // $hang: never completes; rejects at the deadline if there is one.
  function hang() {
    if (isExpired()) return Promise.reject(deadlineError());
    return new Promise((resolve, reject) => {
      if (deadline !== null) pending.add({ reject });
    });
  }

  // Interprets a fixture value for a field (inList=false) or a list item
  // (inList=true). List items that are $error markers become Error values,
  // which graphql-js turns into a field error at the item's path.
  function interpret(value, args, inList) {
    if (value === undefined || value === null) return null;
    if (Array.isArray(value)) return value.map((item) => interpret(item, args, true));
    if (isPlainObject(value)) {
      if (has(value, '$error')) {
        const err = markerError(value);
        if (inList) return err;
        throw err;
      }
      if (has(value, '$delay_ms')) return delayed(value, args);
      if (has(value, '$hang')) return hang();
      if (has(value, '$arg')) {
        const name = String(value.$arg);
        return args && has(args, name) && args[name] !== undefined ? args[name] : null;
      }
    }
    return value;
  }

  function fieldResolver(source, args, _context, info) {
    if (isExpired()) throw deadlineError();
    const value = isPlainObject(source) && has(source, info.fieldName)
      ? source[info.fieldName]
      : null;
    return interpret(value, args, false);
  }

  let document;
  try {
    document = parse(queryText);
  } catch (e) {
    if (e instanceof GraphQLError) return { errors: [e] };
    throw e;
  }
  const validationErrors = validate(schema, document);
  if (validationErrors.length > 0) return { errors: validationErrors };

  try {
    if (deadlineMs !== null) {
      deadline = performance.now() + deadlineMs;
      startTimer(onDeadline, deadlineMs);
    }
    return await execute({
      schema,
      document,
      rootValue: fixture,
      variableValues: variables,
      operationName,
      fieldResolver,
      typeResolver,
    });
  } finally {
    // Anything still pending belongs to a discarded subtree: stop it.
    for (const t of timers) clearTimeout(t);
    timers.clear();
    pending.clear();
  }
}

// ---------------------------------------------------------------------------
// Entry points

async function runArgs(argv) {
  return JSON.stringify(await runReference(loadRequest(parseArgs(argv))));
}

function isCommandLine() {
  if (!isMainThread || !process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isCommandLine()) {
  let finished = false;
  // The event loop drained without a response: only possible with $hang and no
  // deadline. Say so instead of exiting silently.
  process.on('beforeExit', () => {
    if (finished) return;
    process.stderr.write('runner: execution never completed ($hang without --deadline-ms?)\n');
    process.exit(3);
  });
  runArgs(process.argv.slice(2)).then(
    (out) => {
      finished = true;
      process.stdout.write(out + '\n', () => process.exit(0));
    },
    (e) => {
      if (e instanceof UsageError) {
        process.stderr.write(`runner: ${e.message}\n${USAGE}\n`);
        process.exit(2);
      }
      process.stderr.write(`runner: internal error: ${e && e.stack ? e.stack : e}\n`);
      process.exit(3);
    },
  );
} else if (!isMainThread && workerData && workerData.role === 'graphql-diff-reference') {
  parentPort.on('message', ({ id, args }) => {
    runArgs(args).then(
      (stdout) => parentPort.postMessage({ id, stdout }),
      (e) => parentPort.postMessage({
        id,
        error: e instanceof UsageError ? `usage: ${e.message}` : `internal error: ${e && e.stack ? e.stack : e}`,
      }),
    );
  });
}
