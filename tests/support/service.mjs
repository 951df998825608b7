// Starts a `cutoff` server process on a free loopback port and waits for its
// "listening on http://ADDRESS:PORT" (or https://, grpc://, grpcs://) line. Used by the end-to-end tests.
//
//   const svc = await startService(cutoffPath, ['graphql', 'serve', '--schema', s, '--fixture', f]);
//   await fetch(svc.url + '/graphql', ...);
//   svc.logLines();          // the JSON lines it wrote to stderr so far, parsed
//   await svc.stop();        // SIGTERM, then wait for exit (SIGKILL after stopTimeoutMs)
//
// The process is a child of tests/support/children.mjs: it is killed when the check exits,
// however it exits, and when startService itself fails.
import { faultPoint, spawnChild } from './children.mjs';

export async function startService(cutoff, args, { timeoutMs = 15000, stopTimeoutMs = 10000,
                                                   name = args.slice(0, 2).join(' ') } = {}) {
  const child = spawnChild(cutoff, [...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no "listening on" line within ${timeoutMs} ms; stderr:\n${stderr}`)), timeoutMs);
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /listening on ((?:https?|grpcs?):\/\/[^ \n]+)/.exec(stdout);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('error', (e) => { clearTimeout(timer); reject(new Error(`${name}: cannot run ${cutoff}: ${e.message}`)); });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code ?? signal}; stderr:\n${stderr}`));
    });
  }).catch(async (e) => {
    child.kill('SIGKILL');
    if (child.pid !== undefined) await exited;
    throw e;
  });
  await faultPoint('service').catch(async (e) => {
    child.kill('SIGKILL');
    await exited;
    throw e;
  });
  return {
    url,
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    logLines: () => stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
        exited.then(() => clearTimeout(timer));
      }
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
