#!/usr/bin/env node
// Differential test: runs every case under cases/ through the graphql-js
// reference (runner.mjs) and through `cutoff graphql exec`, and compares.
//
//   node tests/graphql/diff/compare.mjs [--cutoff PATH] [--cases DIR] [--only SUBSTRING]
//        [--reference-only] [--jobs N] [--verbose] [--print-reference]
//        [--spawn-runner]
//
// Comparison rules (see README.md):
//  * responses with a `data` key: `data` must be identical including key order
//    (JSON.stringify equality) and `errors` must be equal as a SET of
//    (path, extensions.code) pairs (path null when absent, code null when
//    absent). Messages and locations are not compared.
//  * a response without `data` (request / validation error) only matches
//    another response without `data`; both must have at least one error.
//
// How the reference runs: by default runner.mjs is loaded once per job into a
// worker thread (same code path as its command line, but without paying
// Node's ~0.2 s start-up per case); --spawn-runner starts
// `node runner.mjs ...` as a process for every case instead.
//
// --reference-only runs the reference twice per case -- once as a
// `node runner.mjs` process (checking exit status 0 and valid JSON) and once in
// the worker (or a second process with --spawn-runner) -- and checks that both
// runs agree under the rules above, i.e. that the case is deterministic.
// --print-reference runs the reference once per case and prints
// `<case>: <response JSON>` lines (handy when writing or reviewing cases).

import { Worker } from 'node:worker_threads';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runChild } from '../../support/children.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..', '..');
let casesDir = join(here, 'cases');
const runnerPath = join(here, 'runner.mjs');
const TIMEOUT_MS = 20000;

const USAGE =
  'usage: compare.mjs [--cutoff PATH] [--cases DIR] [--only SUBSTRING] [--reference-only] [--jobs N] ' +
  '[--verbose] [--print-reference] [--spawn-runner]';

function usage(msg) {
  process.stderr.write(`compare: ${msg}\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = {
    cutoff: join(repoRoot, 'build', 'bin', 'cutoff'),
    only: null,
    referenceOnly: false,
    jobs: 2,
    verbose: false,
    printReference: false,
    spawnRunner: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`missing value for ${a}`);
      return argv[++i];
    };
    if (a === '--cutoff') opts.cutoff = resolve(next());
    else if (a === '--cases') casesDir = resolve(next());
    else if (a === '--only') opts.only = next();
    else if (a === '--reference-only') opts.referenceOnly = true;
    else if (a === '--jobs') {
      opts.jobs = Number(next());
      if (!Number.isInteger(opts.jobs) || opts.jobs < 1) usage('--jobs must be a positive integer');
    } else if (a === '--verbose' || a === '-v') opts.verbose = true;
    else if (a === '--print-reference') opts.printReference = true;
    else if (a === '--spawn-runner') opts.spawnRunner = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else usage(`unknown argument: ${a}`);
  }
  return opts;
}

// ---------------------------------------------------------------------------
// Cases

function loadCases(only) {
  if (!existsSync(casesDir)) usage(`no cases directory ${casesDir} (run gen_cases.mjs)`);
  const names = readdirSync(casesDir)
    .filter((n) => statSync(join(casesDir, n)).isDirectory())
    .filter((n) => only === null || n.includes(only))
    .sort();
  return names.map((name) => {
    const dir = join(casesDir, name);
    const args = [
      '--schema', join(dir, 'schema.graphql'),
      '--fixture', join(dir, 'fixture.json'),
      '--query', join(dir, 'query.graphql'),
    ];
    const varsPath = join(dir, 'variables.json');
    if (existsSync(varsPath)) {
      args.push('--variables', JSON.stringify(JSON.parse(readFileSync(varsPath, 'utf8'))));
    }
    const optsPath = join(dir, 'options.json');
    if (existsSync(optsPath)) {
      const o = JSON.parse(readFileSync(optsPath, 'utf8'));
      if (o.operation !== undefined) args.push('--operation', String(o.operation));
      if (o.deadline_ms !== undefined) args.push('--deadline-ms', String(o.deadline_ms));
    }
    return { name, args, cutoffArgs: cutoffArgs(args) };
  });
}

// The same case for `cutoff graphql exec`, whose --query is the document itself (@FILE reads a
// file) and whose budget option is --budget-ms (docs/cli.md).
function cutoffArgs(args) {
  const out = [];
  for (let i = 0; i < args.length; i += 2) {
    const [name, value] = [args[i], args[i + 1]];
    if (name === '--query') out.push(name, '@' + value);
    else if (name === '--deadline-ms') out.push('--budget-ms', value);
    else out.push(name, value);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Processes

async function run(cmd, args) {
  const started = Date.now();
  const r = await runChild(cmd, args, { timeoutMs: TIMEOUT_MS });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.error ? String(r.error.message) : r.stderr,
           timedOut: r.timedOut, ms: Date.now() - started };
}

// Returns { response } or { problem }. The reference exits 0 whenever it printed a response;
// cutoff exits 0 only for a response without errors, else non-zero (6 when the first error is
// DEADLINE_EXCEEDED), still printing the response.
function interpretRun(r, exitCodes = 'zero') {
  if (r.timedOut) return { problem: `timed out after ${TIMEOUT_MS} ms` };
  if (exitCodes === 'cutoff' && (r.code === 1 || r.code === 2 || r.code === 6)) {
    const result = interpretRun({ ...r, code: 0 });
    if (result.problem) return result;
    const errors = result.response.errors || [];
    const first = errors.length > 0 && errors[0].extensions ? errors[0].extensions.code : undefined;
    if (errors.length === 0) return { problem: `exit ${r.code} for a response without errors` };
    if ((first === 'DEADLINE_EXCEEDED') !== (r.code === 6)) {
      return { problem: `exit ${r.code} for a response whose first error is ${first ?? 'uncoded'}` };
    }
    return result;
  }
  if (exitCodes === 'cutoff' && r.code === 0) {
    const result = interpretRun(r);
    if (!result.problem && (result.response.errors || []).length > 0) {
      return { problem: 'exit 0 for a response with errors' };
    }
    return result;
  }
  if (r.code !== 0) {
    const tail = r.stderr.trim().split('\n').slice(-2).join(' | ');
    return { problem: `exit ${r.code ?? r.signal}${tail ? `: ${clip(tail, 200)}` : ''}` };
  }
  let response;
  try {
    response = JSON.parse(r.stdout);
  } catch (e) {
    return { problem: `stdout is not valid JSON: ${clip(JSON.stringify(r.stdout), 120)}` };
  }
  if (response === null || typeof response !== 'object' || Array.isArray(response)) {
    return { problem: 'response is not a JSON object' };
  }
  if (!Object.hasOwn(response, 'data') && !Object.hasOwn(response, 'errors')) {
    return { problem: 'response has neither data nor errors' };
  }
  if (Object.hasOwn(response, 'errors') && !Array.isArray(response.errors)) {
    return { problem: 'errors is not an array' };
  }
  return { response };
}

// ---------------------------------------------------------------------------
// Comparison

function clip(s, n) {
  return s.length > n ? `${s.slice(0, n - 3)}...` : s;
}

function show(v) {
  return v === undefined ? '(absent)' : clip(JSON.stringify(v), 80);
}

function hasData(resp) {
  return Object.hasOwn(resp, 'data') && resp.data !== undefined;
}

function errorKeys(resp) {
  const set = new Set();
  for (const e of resp.errors ?? []) {
    const path = e && Array.isArray(e.path) ? e.path : null;
    // An empty code says nothing: cutoff (like most servers) omits it, so it compares as absent.
    const raw = e && e.extensions && e.extensions.code !== undefined ? e.extensions.code : null;
    const code = raw === '' ? null : raw;
    set.add(JSON.stringify([path, code]));
  }
  return set;
}

function fmtKey(k) {
  const [path, code] = JSON.parse(k);
  const codeText = typeof code === 'string' && code !== '' ? code : JSON.stringify(code);
  return `${path === null ? '-' : path.join('.')}${code === null ? '' : `(${codeText})`}`;
}

function pathStr(path) {
  let s = 'data';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : `.${p}`;
  return s;
}

// First difference between two JSON values, as a short string, or null.
function firstDiff(a, b, path, la, lb) {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) {
      return `${pathStr(path)}: list length ${la}=${a.length} ${lb}=${b.length}`;
    }
    for (let i = 0; i < a.length; i++) {
      const d = firstDiff(a[i], b[i], [...path, i], la, lb);
      if (d) return d;
    }
  } else if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    const sa = new Set(ka);
    const sb = new Set(kb);
    const onlyA = ka.filter((k) => !sb.has(k));
    const onlyB = kb.filter((k) => !sa.has(k));
    if (onlyA.length || onlyB.length) {
      return `${pathStr(path)}: keys only in ${la}: [${onlyA}], only in ${lb}: [${onlyB}]`;
    }
    for (const k of ka) {
      const d = firstDiff(a[k], b[k], [...path, k], la, lb);
      if (d) return d;
    }
    if (ka.join('\u0000') !== kb.join('\u0000')) {
      return `${pathStr(path)}: key order ${la}=[${ka}] ${lb}=[${kb}]`;
    }
  }
  return `${pathStr(path)}: ${la}=${show(a)} ${lb}=${show(b)}`;
}

// Returns null when equal, else a list of difference descriptions.
function compareResponses(a, b, la, lb) {
  const da = hasData(a);
  const db = hasData(b);
  const problems = [];
  if (!da || !db) {
    if (da !== db) {
      const [withData, without] = da ? [la, lb] : [lb, la];
      problems.push(`${withData} has data, ${without} has none (${without} errors: ${(da ? b : a).errors?.length ?? 0})`);
      return problems;
    }
    for (const [resp, label] of [[a, la], [b, lb]]) {
      if (!Array.isArray(resp.errors) || resp.errors.length === 0) {
        problems.push(`${label} has neither data nor errors`);
      }
    }
    return problems.length ? problems : null;
  }
  if (JSON.stringify(a.data) !== JSON.stringify(b.data)) {
    problems.push(firstDiff(a.data, b.data, [], la, lb));
  }
  const ea = errorKeys(a);
  const eb = errorKeys(b);
  const onlyA = [...ea].filter((k) => !eb.has(k)).map(fmtKey);
  const onlyB = [...eb].filter((k) => !ea.has(k)).map(fmtKey);
  if (onlyA.length || onlyB.length) {
    problems.push(`errors only in ${la}: [${onlyA.join(', ')}], only in ${lb}: [${onlyB.join(', ')}]`);
  }
  return problems.length ? problems : null;
}

// ---------------------------------------------------------------------------
// Main

// A worker thread running runner.mjs; one request at a time.
class ReferenceWorker {
  constructor() {
    this.nextId = 1;
    this.start();
  }

  start() {
    this.worker = new Worker(runnerPath, { workerData: { role: 'graphql-diff-reference' } });
    this.worker.unref();
    this.waiting = null;
    this.worker.on('message', (msg) => {
      const w = this.waiting;
      if (w && msg.id === w.id) {
        this.waiting = null;
        w.done(msg);
      }
    });
    this.worker.on('error', (e) => this.fail(`worker error: ${e && e.message}`));
    this.worker.on('exit', (code) => this.fail(`worker exited with ${code}`));
  }

  fail(problem) {
    const w = this.waiting;
    this.waiting = null;
    if (w) w.done({ id: w.id, problem });
  }

  // Resolves to the same shape as run(): { code, stdout, stderr, timedOut }.
  run(args) {
    return new Promise((resolvePromise) => {
      const id = this.nextId++;
      const timer = setTimeout(() => {
        // A stuck case: throw the worker away and start a fresh one.
        this.fail('timeout');
        this.worker.removeAllListeners();
        this.worker.terminate();
        this.start();
      }, TIMEOUT_MS);
      this.waiting = {
        id,
        done: (msg) => {
          clearTimeout(timer);
          if (msg.problem === 'timeout') {
            resolvePromise({ code: null, signal: null, stdout: '', stderr: '', timedOut: true });
          } else if (msg.problem !== undefined) {
            resolvePromise({ code: 3, signal: null, stdout: '', stderr: msg.problem, timedOut: false });
          } else if (msg.error !== undefined) {
            const code = msg.error.startsWith('usage:') ? 2 : 3;
            resolvePromise({ code, signal: null, stdout: '', stderr: msg.error, timedOut: false });
          } else {
            resolvePromise({ code: 0, signal: null, stdout: msg.stdout, stderr: '', timedOut: false });
          }
        },
      };
      this.worker.postMessage({ id, args });
    });
  }

  close() {
    this.worker.removeAllListeners();
    return this.worker.terminate();
  }
}

function runReferenceProcess(args) {
  return run(process.execPath, [runnerPath, ...args]);
}

async function checkCase(c, opts, slot) {
  const runRef = (args) => (slot.worker ? slot.worker.run(args) : runReferenceProcess(args));
  if (opts.printReference) {
    const ref = interpretRun(await runRef(c.args));
    if (ref.problem) return { ok: false, msg: `reference: ${ref.problem}` };
    return { ok: true, print: JSON.stringify(ref.response) };
  }
  const la = opts.referenceOnly ? 'ref-cli' : 'ref';
  const lb = opts.referenceOnly ? 'ref2' : 'cutoff';
  // Both sides run concurrently (they mostly wait on deadlines/timers).
  const [refRun, otherRun] = await Promise.all([
    opts.referenceOnly ? runReferenceProcess(c.args) : runRef(c.args),
    opts.referenceOnly ? runRef(c.args) : run(opts.cutoff, ['graphql', 'exec', ...c.cutoffArgs]),
  ]);
  const ref = interpretRun(refRun);
  if (ref.problem) return { ok: false, msg: `${la}: ${ref.problem}` };
  const other = interpretRun(otherRun, opts.referenceOnly ? 'zero' : 'cutoff');
  if (other.problem) return { ok: false, msg: `${lb}: ${other.problem}`, ref: ref.response, lb };
  const problems = compareResponses(ref.response, other.response, la, lb);
  if (problems) {
    return { ok: false, msg: clip(problems.join('; '), 400), ref: ref.response, other: other.response, lb };
  }
  return { ok: true };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.printReference) opts.referenceOnly = true;
  if (!opts.referenceOnly && !existsSync(opts.cutoff)) {
    usage(`cutoff binary not found: ${opts.cutoff} (use --cutoff PATH or --reference-only)`);
  }
  const cases = loadCases(opts.only);
  const started = Date.now();
  let next = 0;
  let passed = 0;
  const failed = [];
  const printed = [];
  async function slotLoop() {
    const slot = { worker: opts.spawnRunner ? null : new ReferenceWorker() };
    try {
      while (next < cases.length) {
        const c = cases[next++];
        let result;
        try {
          result = await checkCase(c, opts, slot);
        } catch (e) {
          result = { ok: false, msg: `harness error: ${e && e.message}` };
        }
        if (result.ok) {
          passed++;
          if (result.print !== undefined) printed.push(`${c.name}: ${result.print}`);
        } else {
          failed.push(c.name);
          process.stdout.write(`FAIL ${c.name}: ${result.msg}\n`);
          if (opts.verbose) {
            if (result.ref !== undefined) process.stdout.write(`  ref:    ${JSON.stringify(result.ref)}\n`);
            if (result.other !== undefined) {
              process.stdout.write(`  ${(result.lb + ':').padEnd(7)} ${JSON.stringify(result.other)}\n`);
            }
          }
        }
      }
    } finally {
      if (slot.worker) await slot.worker.close();
    }
  }
  await Promise.all(Array.from({ length: Math.min(opts.jobs, cases.length) }, slotLoop));
  printed.sort();
  for (const line of printed) process.stdout.write(line + '\n');
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  // Exit only once stdout is flushed (pipes may be written asynchronously).
  process.stdout.write(
    `${cases.length} cases, ${passed} passed, ${failed.length} failed` +
    `${opts.referenceOnly ? ' (reference only)' : ''} in ${secs}s\n`,
    () => process.exit(failed.length > 0 ? 1 : 0),
  );
}

main();
