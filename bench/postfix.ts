// Debian's Postfix as a bench peer: an instance of its own (config and queue in a temp folder,
// smtpd on a free loopback port, every client on loopback trusted), which either discards what it
// queued (bench:ingress) or relays it to one SMTP host (bench:deliver), optionally through a
// milter (OpenDKIM). The system's own instance is never configured or started.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../dapr/cluster/cluster.ts';
import { sleep } from './common.ts';

export interface PostfixOptions {
  /** STARTTLS on smtpd with this certificate; none: plain. */
  tls?: { cert: string; key: string } | null;
  /** Relay everything to 127.0.0.1:<port> (no DNS); none: discard once queued. */
  relayPort?: number;
  /** A milter on 127.0.0.1:<port> every message passes (OpenDKIM signing). */
  milterPort?: number;
}

export interface Postfix {
  port: number;
  version: string;
  /** The master and every process it runs (smtpd, cleanup, qmgr, smtp or discard, postlogd). */
  pids(): number[];
  /** Messages that left the queue: discarded, or accepted by the relay host. */
  sent(): number;
  stop(): void;
}

export const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('data', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** Installs Debian packages that are missing (`command` tells whether one is there). */
export function ensureDebian(command: string, packages: string[]): void {
  execFileSync(
    'sh',
    [
      '-c',
      `command -v ${command} > /dev/null || (echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections ` +
        `&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages.join(' ')})`,
    ],
    { stdio: 'inherit' },
  );
}

export async function startPostfix(opts: PostfixOptions = {}): Promise<Postfix> {
  ensureDebian('postfix', ['postfix']);
  const dir = mkdtempSync(join(tmpdir(), 'gatepost-bench-postfix-'));
  try {
    return await configureAndStart(dir, opts);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function configureAndStart(dir: string, { tls, relayPort, milterPort }: PostfixOptions): Promise<Postfix> {
  chmodSync(dir, 0o755); // Postfix's own user must reach its data directory inside
  const port = await freePort();
  const conf = join(dir, 'conf');
  mkdirSync(conf);
  mkdirSync(join(dir, 'queue'));
  mkdirSync(join(dir, 'data'));
  execFileSync('chown', ['postfix', join(dir, 'data')]);
  if (tls) {
    writeFileSync(join(conf, 'cert.pem'), tls.cert);
    writeFileSync(join(conf, 'key.pem'), tls.key, { mode: 0o600 });
  }
  const outbound = relayPort
    ? [
        `relayhost = [127.0.0.1]:${relayPort}`,
        'default_transport = smtp',
        'relay_transport = smtp',
        'smtp_dns_support_level = disabled',
        'smtp_tls_security_level = none',
      ]
    : // Accept and queue only: what is queued is thrown away, nothing leaves.
      ['default_transport = discard', 'relay_transport = discard'];
  const milter = milterPort
    ? [`smtpd_milters = inet:127.0.0.1:${milterPort}`, 'milter_default_action = tempfail', 'milter_protocol = 6']
    : [];
  writeFileSync(
    join(conf, 'main.cf'),
    [
      'compatibility_level = 3.6',
      `queue_directory = ${dir}/queue`,
      `data_directory = ${dir}/data`,
      'mail_owner = postfix',
      'setgid_group = postdrop',
      'myhostname = postfix.bench.test',
      'mydestination =',
      'inet_interfaces = loopback-only',
      'inet_protocols = ipv4',
      'mynetworks = 127.0.0.0/8',
      'smtpd_client_restrictions =',
      'smtpd_relay_restrictions = permit_mynetworks, reject',
      'smtpd_recipient_restrictions = permit_mynetworks, reject',
      'smtpd_peername_lookup = no',
      ...outbound,
      ...milter,
      'alias_maps =',
      'local_recipient_maps =',
      'biff = no',
      `maillog_file = ${dir}/maillog`,
      `maillog_file_prefixes = ${dir}`,
      ...(tls
        ? ['smtpd_tls_security_level = may', `smtpd_tls_cert_file = ${conf}/cert.pem`, `smtpd_tls_key_file = ${conf}/key.pem`]
        : []),
      '',
    ].join('\n'),
  );
  // Debian's services, none chrooted (the temp queue has no copy of /etc to chroot into).
  writeFileSync(
    join(conf, 'master.cf'),
    [
      `127.0.0.1:${port} inet n - n - - smtpd`,
      'pickup unix n - n 60 1 pickup',
      'cleanup unix n - n - 0 cleanup',
      'qmgr unix n - n 300 1 qmgr',
      'tlsmgr unix - - n 1000? 1 tlsmgr',
      'rewrite unix - - n - - trivial-rewrite',
      'bounce unix - - n - 0 bounce',
      'defer unix - - n - 0 bounce',
      'trace unix - - n - 0 bounce',
      'verify unix - - n - 1 verify',
      'flush unix n - n 1000? 0 flush',
      'proxymap unix - - n - - proxymap',
      'showq unix n - n - - showq',
      'error unix - - n - - error',
      'retry unix - - n - - error',
      'discard unix - - n - - discard',
      'smtp unix - - n - - smtp',
      'anvil unix - - n - 1 anvil',
      'scache unix - - n - 1 scache',
      'postlog unix-dgram n - n - 1 postlogd',
      '',
    ].join('\n'),
  );
  execFileSync('postfix', ['-c', conf, 'start'], { stdio: 'ignore' });
  for (let i = 0; i < 100 && !(await answers(port)); i++) await sleep(100);
  const masterPid = Number(readFileSync(join(dir, 'queue', 'pid', 'master.pid'), 'utf8').trim());
  return {
    port,
    version: execFileSync('postconf', ['-h', '-d', 'mail_version'], { encoding: 'utf8' }).trim(),
    pids: () => [
      masterPid,
      ...execFileSync('ps', ['-o', 'pid=', '--ppid', String(masterPid)], { encoding: 'utf8' })
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    ],
    sent: () => (readFileSync(join(dir, 'maillog'), 'utf8').match(/ status=sent /g) ?? []).length,
    stop() {
      execFileSync('postfix', ['-c', conf, 'stop'], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
