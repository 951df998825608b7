// TLS for the end-to-end checks: a certificate authority made for the run with the openssl
// command line, a server certificate it issued for 127.0.0.1 and localhost, and requests over
// https:// that trust it (fetch in Node 18 cannot be given a CA).
//
//   const tls = throwawayCa();     // { dir, ca, cert, key }: PEM files; remove(tls) at the end
//   const { status, body } = await httpsRequest(url, { ca: tls.ca, method: 'POST', headers, body });
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function throwawayCa() {
  const dir = mkdtempSync(join(tmpdir(), 'cutoff-test-ca-'));
  const cnf = join(dir, 'openssl.cnf');
  writeFileSync(cnf, '[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n' +
    '[ca_ext]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n' +
    '[server_ext]\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\n' +
    'subjectAltName = IP:127.0.0.1,DNS:localhost\n');
  const openssl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const newKey = (key) => ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key];
  const f = (name) => join(dir, name);
  openssl('req', '-x509', '-config', cnf, '-extensions', 'ca_ext', ...newKey(f('ca.key')), '-days', '2',
          '-subj', '/CN=cutoff test CA', '-out', f('ca.pem'));
  openssl('req', '-new', '-config', cnf, ...newKey(f('server.key')), '-subj', '/CN=127.0.0.1', '-out', f('server.csr'));
  openssl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-set_serial', '2',
          '-days', '2', '-extfile', cnf, '-extensions', 'server_ext', '-out', f('server.pem'));
  return { dir, ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key') };
}

export function removeCa(tls) {
  rmSync(tls.dir, { recursive: true, force: true });
}

// One request over https:// trusting the CA file `ca`; resolves to { status, headers, body }.
export function httpsRequest(url, { ca, method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca: readFileSync(ca) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
