// Starts a `cutoff` server process on a free loopback port and waits for its
// "listening on http://ADDRESS:PORT" line. Used by the end-to-end tests.
//
//   const svc = await startService(cutoffPath, ['graphql', 'serve', '--schema', s, '--fixture', f]);
//   await fetch(svc.url + '/graphql', ...);
//   svc.logLines();          // the JSON lines it wrote to stderr so far, parsed
//   await svc.stop();        // SIGTERM, then wait for exit
import { spawn } from 'node:child_process';

export async function startService(cutoff, args, { timeoutMs = 15000, name = args.slice(0, 2).join(' ') } = {}) {
  const child = spawn(cutoff, [...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no "listening on" line within ${timeoutMs} ms; stderr:\n${stderr}`)), timeoutMs);
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /listening on (http:\/\/[^ \n]+)/.exec(stdout);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${name} exited with ${code}; stderr:\n${stderr}`)); });
  });
  return {
    url,
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    logLines: () => stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

// Reads one sample from a Prometheus text exposition: metric(text, 'name{a="b"}') -> number (0 if absent).
export function metric(text, series) {
  for (const line of text.split('\n')) {
    if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  }
  return 0;
}
