// Every npm package pinned in package-lock.json must run on Debian 12's Node.js (the `nodejs`
// package, 18.20), the one scripts/bootstrap installs on a bare machine. A machine that carries
// a newer Node hides a package whose `engines.node` excludes 18 until a user on plain Debian
// runs it (playwright-core 1.62 and later refuse to start below Node 20): this check reads the
// lock file, so it fails on any machine.
//
//   node tests/npm/engines_check.mjs [--lock FILE] [--node VERSION]
//
// Options:
//   --lock FILE      the lock file (default: package-lock.json next to tests/)
//   --node VERSION   the Node.js version every package must admit (default 18.20.4, Debian 12's)
//   -h, --help       this text
//
// Exit status: 0 when every package admits the version, 1 when one does not (each is named),
// 2 for bad usage or an engines range this check cannot read.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const NAME = 'engines_check';

class RangeSyntaxError extends Error {}

function parseVersion(text) {
  const m = /^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.exec(text);
  if (!m) throw new RangeSyntaxError(`cannot read version "${text}"`);
  // null: a wildcard or a missing part ("18", "18.x").
  return m.slice(1, 4).map((p) => (p === undefined || /^[xX*]$/.test(p) ? null : Number(p)));
}

function compare(a, b) {
  for (let i = 0; i < 3; ++i) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

const filled = (parts) => parts.map((p) => p ?? 0);

// The smallest version above every version matching the partial `parts` ("18" -> 19.0.0).
function above(parts) {
  const n = parts.findIndex((p) => p === null);
  if (n === 0) return null;
  if (n === -1) return null;
  const next = filled(parts.slice(0, n));
  next[n - 1] += 1;
  while (next.length < 3) next.push(0);
  return next;
}

// One comparator set (space separated, all must hold) as a predicate over [major, minor, patch].
function comparatorSet(text) {
  const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(text);
  if (hyphen) {
    const low = filled(parseVersion(hyphen[1]));
    const highParts = parseVersion(hyphen[2]);
    const highAbove = above(highParts);
    return (v) => compare(v, low) >= 0 && (highAbove ? compare(v, highAbove) < 0 : compare(v, filled(highParts)) <= 0);
  }
  const tests = text.split(/\s+/).filter(Boolean).map((c) => {
    const m = /^(>=|<=|>|<|=|\^|~)?\s*(.+)$/.exec(c);
    const op = m[1] ?? '';
    const parts = parseVersion(m[2]);
    const low = filled(parts);
    switch (op) {
      case '>=': return (v) => compare(v, low) >= 0;
      case '>': {
        const next = above(parts);
        return next ? (v) => compare(v, next) >= 0 : (v) => compare(v, low) > 0;
      }
      case '<': return (v) => compare(v, low) < 0;
      case '<=': {
        const next = above(parts);
        return next ? (v) => compare(v, next) < 0 : (v) => compare(v, low) <= 0;
      }
      case '^': {
        // Below the next release of the leftmost non-zero part given (^1.2.3 <2.0.0, ^0.2.3
        // <0.3.0, ^0.0.3 <0.0.4, ^0.x <1.0.0).
        const given = parts.findIndex((p) => p === null);
        const last = (given === -1 ? 3 : given) - 1;
        if (last < 0) return () => true;
        let i = low.slice(0, last + 1).findIndex((p) => p !== 0);
        if (i === -1) i = last;
        const high = [...low.slice(0, i), low[i] + 1, 0, 0].slice(0, 3);
        return (v) => compare(v, low) >= 0 && compare(v, high) < 0;
      }
      case '~': {
        if (parts[0] === null) return () => true;
        const high = parts[1] === null ? [low[0] + 1, 0, 0] : [low[0], low[1] + 1, 0];
        return (v) => compare(v, low) >= 0 && compare(v, high) < 0;
      }
      default: {
        if (parts[0] === null) return () => true;
        const next = above(parts);
        return next ? (v) => compare(v, low) >= 0 && compare(v, next) < 0 : (v) => compare(v, low) === 0;
      }
    }
  });
  return (v) => tests.every((t) => t(v));
}

// Whether `version` satisfies the npm range `range` (the subset of node-semver that engines
// fields use: ||, comparators, ^, ~, x-ranges, hyphen ranges). Throws RangeSyntaxError on
// anything else rather than guessing.
export function satisfies(version, range) {
  const v = filled(parseVersion(version));
  const sets = range.trim() === '' ? [''] : range.split('||').map((s) => s.trim());
  return sets.some((s) => (s === '' ? true : comparatorSet(s.replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1'))(v)));
}

function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        lock: { type: 'string', default: fileURLToPath(new URL('../../package-lock.json', import.meta.url)) },
        node: { type: 'string', default: '18.20.4' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    console.error(`${NAME}: ${e.message} (try --help)`);
    return 2;
  }
  if (values.help) {
    console.log(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(0, 14)
      .map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
    return 0;
  }
  const lock = JSON.parse(readFileSync(values.lock, 'utf8'));
  const excluding = [];
  let checked = 0;
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (path === '') continue;
    const range = entry.engines?.node;
    if (range === undefined) continue;
    const name = path.replace(/^.*node_modules\//, '');
    if (typeof range !== 'string') {
      console.error(`${NAME}: ${name} ${entry.version}: engines.node is ${JSON.stringify(range)}, not a range`);
      return 2;
    }
    try {
      if (!satisfies(values.node, range)) excluding.push(`${name} ${entry.version} (node ${range})`);
    } catch (e) {
      if (!(e instanceof RangeSyntaxError)) throw e;
      console.error(`${NAME}: ${name} ${entry.version}: engines.node "${range}": ${e.message}`);
      return 2;
    }
    checked += 1;
  }
  if (excluding.length) {
    console.error(`${NAME}: FAIL: ${excluding.length} package(s) in ${values.lock} do not run on Node.js ${values.node}: ` +
                  `${excluding.join(', ')}; pin a release whose engines admit it (npm view PACKAGE@VERSION engines)`);
    return 1;
  }
  console.log(`${NAME}: ok: all ${checked} packages that declare engines.node admit Node.js ${values.node}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main();
