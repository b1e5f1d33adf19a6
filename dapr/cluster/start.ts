// `npm run start:dapr`: the Dapr topology in the foreground, stopped with Ctrl-C. Starts Redis
// and PostgreSQL first when they are not answering (or uses REDIS_HOST and DATABASE_URL).
import { execSync } from 'node:child_process';
import { DaprCluster } from './cluster.ts';

function ensure(what: string, check: string, start: string): void {
  try {
    execSync(check, { stdio: 'ignore' });
  } catch {
    console.log(`${what} is not answering: starting it`);
    execSync(start, { stdio: 'inherit' });
  }
}

if (!process.env.REDIS_HOST) {
  ensure(
    'Redis',
    'redis-cli -h 127.0.0.1 -p 6379 ping',
    'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
  );
}
if (!process.env.DATABASE_URL) {
  ensure(
    'PostgreSQL',
    'pg_isready -q -h 127.0.0.1 -p 5432',
    'pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start',
  );
}

const cluster = await DaprCluster.start({
  databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  redisHost: process.env.REDIS_HOST,
  port: Number(process.env.PORT ?? 3000),
  env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('GATEPOST_')) as [string, string][]),
});
console.log(`Gatepost on Dapr: ${cluster.url} (logs in ${cluster.workDir})`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log('stopping the cluster');
    void cluster.stop().then(() => process.exit(0));
  });
}
