// Child processes that end with the check that started them, on every path: a check must stop
// what it started whether it passes, fails, throws, is interrupted or is killed.
//
//   const child = spawnChild(cutoff, ['graphql', 'serve', ...], { stdio: [...] });
//   const r = await runChild(cutoff, ['lab', ...], { timeoutMs: 600000 });  // {status, signal, stdout, stderr, error}
//   await faultPoint('service');     // a test hook, see below
//
// - Every child still running when this process exits gets SIGKILL, whatever the way out: the
//   end of the script, process.exit() from anywhere (a dependency that refuses to run does
//   that), an uncaught exception or an unhandled rejection.
// - SIGINT, SIGTERM and SIGHUP stop the children (SIGTERM, then SIGKILL after 2 s) and exit with
//   128 + the signal's number.
// - A SIGKILL of this process runs no code here: for that case each child is started through
//   util-linux's `setpriv --pdeathsig KILL`, which has the kernel kill it when its parent dies
//   (PR_SET_PDEATHSIG) and then runs the command in its place (same pid). CTest's own timeout
//   kills the whole process tree anyway. Residual: a parent killed in the microseconds between
//   the fork and setpriv's prctl leaves that child running.
// - Headless Chromium, which playwright-core starts, is playwright-core's: it kills the browser's
//   process group on exit, and the browser quits when its DevTools pipe closes.
//
// faultPoint(name) does nothing unless $CUTOFF_TEST_FAULT is "NAME:MODE". Then it prints
// "fault NAME:MODE: pid P descendants PID:NAME ..." and: fail (throws, the check's own failure
// path), exit (process.exit(1)), throw (an uncaught exception), reject (an unhandled
// rejection) or hang (waits for a signal). tests/support/cleanup_check.mjs uses it to show that
// nothing outlives a check.
import { spawn } from 'node:child_process';
import { accessSync, constants as fsConstants, readdirSync, readFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';

const live = new Set();
let installed = false;
let stopping = false;

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => {
  try {
    accessSync(p, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
});

function killAll(signal) {
  for (const child of live) {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
  }
}

function install() {
  if (installed) return;
  installed = true;
  process.on('exit', () => killAll('SIGKILL'));
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(name, () => {
      const code = 128 + osConstants.signals[name];
      if (stopping) process.exit(code);
      stopping = true;
      process.stderr.write(`${name}: stopping ${live.size} child process(es)\n`);
      const deadline = setTimeout(() => process.exit(code), 2000);
      const waits = [...live].map((c) => new Promise((resolve) => c.once('exit', resolve)));
      killAll('SIGTERM');
      Promise.all(waits).then(() => {
        clearTimeout(deadline);
        process.exit(code);
      });
    });
  }
}

// The argv that runs `command` with a parent-death signal, when setpriv is there and the
// command can be run at all (otherwise spawn's own error, such as ENOENT, should show).
function tied(command, args) {
  if (!SETPRIV) return [command, args];
  try {
    if (command.includes('/')) accessSync(command, fsConstants.X_OK);
  } catch {
    return [command, args];
  }
  return [SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args]];
}

// child_process.spawn(command, args, options), tied to this process (see the top).
export function spawnChild(command, args = [], options = {}) {
  install();
  const [file, argv] = tied(command, args);
  const child = spawn(file, argv, { ...options, detached: false });
  if (child.pid !== undefined) {
    live.add(child);
    child.once('exit', () => live.delete(child));
  }
  child.once('error', () => live.delete(child));
  return child;
}

// Runs a command to its end (at most timeoutMs, then SIGKILL) and collects its output. Never
// rejects: a command that cannot start resolves with `error` set.
export function runChild(command, args = [], { timeoutMs = 60000, input } = {}) {
  return new Promise((resolve) => {
    const child = spawnChild(command, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    if (input !== undefined) child.stdin.end(input);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ status: null, signal: null, stdout, stderr, error, timedOut });
    });
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, error: undefined, timedOut });
    });
  });
}

// Every process below `root` (from /proc), children first.
export function descendants(root = process.pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(entry));
  }
  const found = [];
  for (let queue = [root]; queue.length;) {
    const next = [];
    for (const pid of queue) {
      for (const child of children.get(pid) ?? []) {
        found.push(child);
        next.push(child);
      }
    }
    queue = next;
  }
  return found;
}

export async function faultPoint(name) {
  const wanted = process.env.CUTOFF_TEST_FAULT ?? '';
  const [at, mode] = wanted.split(':');
  if (at !== name) return;
  const below = descendants().map((pid) => {
    try {
      return `${pid}:${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()}`;
    } catch {
      return `${pid}:?`;
    }
  });
  console.log(`fault ${name}:${mode}: pid ${process.pid} descendants ${below.join(' ')}`);
  switch (mode) {
    case 'fail': throw new Error(`fault injected at ${name} ($CUTOFF_TEST_FAULT)`);
    case 'exit': return process.exit(1);
    case 'throw':
      setImmediate(() => { throw new Error(`uncaught exception injected at ${name}`); });
      break;
    case 'reject':
      Promise.reject(new Error(`unhandled rejection injected at ${name}`));
      break;
    case 'hang':
      break;
    default: throw new Error(`CUTOFF_TEST_FAULT: unknown mode "${mode}" (fail, exit, throw, reject, hang)`);
  }
  // Until the exception, the rejection or a signal ends the process.
  await new Promise(() => setInterval(() => {}, 1000));
}
