// The operator contract's settings: defaults, parsing and what is refused (webhooks, SMTP submission, direct delivery, sending domains, inbound MX).
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('loadConfig: webhooks', () => {
  it('defaults to 15 attempts over about three days, a 15 s deadline, disabling after 5 days, nothing allowed', () => {
    const c = loadConfig({});
    expect(c.webhookRetrySchedule).toHaveLength(14);
    const hours = c.webhookRetrySchedule.reduce((a, b) => a + b, 0) / 3_600_000;
    expect(hours).toBeGreaterThan(60);
    expect(hours).toBeLessThan(80);
    expect(c.webhookTimeoutMs).toBe(15_000);
    expect(c.webhookDisableAfterMs).toBe(5 * 86_400_000);
    expect(c.webhookAllow).toEqual([]);
    expect(c.dnsServers).toBeNull();
  });

  it('reads the environment', () => {
    const c = loadConfig({
      GATEPOST_WEBHOOK_RETRY: '200ms, 1s',
      GATEPOST_WEBHOOK_TIMEOUT: '2s',
      GATEPOST_WEBHOOK_DISABLE_AFTER: '1h',
      GATEPOST_WEBHOOK_ALLOW: '127.0.0.0/8, ::1',
      GATEPOST_DNS_SERVERS: '127.0.0.1:5353',
    });
    expect(c).toMatchObject({
      webhookRetrySchedule: [200, 1000],
      webhookTimeoutMs: 2000,
      webhookDisableAfterMs: 3_600_000,
      webhookAllow: ['127.0.0.0/8', '::1'],
      dnsServers: ['127.0.0.1:5353'],
    });
    expect(loadConfig({ GATEPOST_WEBHOOK_ALLOW: '' }).webhookAllow).toEqual([]);
  });

  it('refuses more than 14 waits (15 attempts in all) and a list where one duration is wanted', () => {
    expect(() => loadConfig({ GATEPOST_WEBHOOK_RETRY: Array(15).fill('1s').join(',') })).toThrow(/at most 14 waits/);
    expect(() => loadConfig({ GATEPOST_WEBHOOK_TIMEOUT: '1s,2s' })).toThrow(/one duration/);
    expect(() => loadConfig({ GATEPOST_WEBHOOK_RETRY: 'soon' })).toThrow(/GATEPOST_WEBHOOK_RETRY/);
  });

  it('reads the encryption key and the old keys, and refuses a malformed key or old keys without a current one', () => {
    const current = 'a'.repeat(64);
    const old = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({}).encryption).toBeNull();
    expect(loadConfig({ GATEPOST_ENCRYPTION_KEY: current, GATEPOST_ENCRYPTION_KEYS_OLD: old }).encryption).toEqual({
      current: Buffer.from(current, 'hex'),
      old: [Buffer.alloc(32, 7)],
    });
    expect(() => loadConfig({ GATEPOST_ENCRYPTION_KEY: 'secret' })).toThrow(/GATEPOST_ENCRYPTION_KEY must be 32 random bytes/);
    expect(() => loadConfig({ GATEPOST_ENCRYPTION_KEYS_OLD: old })).toThrow(/needs GATEPOST_ENCRYPTION_KEY/);
  });
});

describe('loadConfig: SMTP submission limits', () => {
  it('defaults to 100 clients, 30 s idle, 3 failed AUTH a session and 20 an address in 15 minutes', () => {
    expect(loadConfig({}).smtpLimits).toEqual({
      maxClients: 100,
      idleTimeoutMs: 30_000,
      authFailuresPerSession: 3,
      authFailuresPerAddress: 20,
      authFailureWindowMs: 15 * 60_000,
    });
  });

  it('reads the environment, and refuses a count that is not a whole number of at least 1', () => {
    const c = loadConfig({
      GATEPOST_SMTP_MAX_CLIENTS: '2',
      GATEPOST_SMTP_IDLE_TIMEOUT: '1s',
      GATEPOST_SMTP_AUTH_FAILURES: '5',
      GATEPOST_SMTP_AUTH_FAILURES_PER_ADDRESS: '4',
      GATEPOST_SMTP_AUTH_FAILURE_WINDOW: '1h',
    });
    expect(c.smtpLimits).toEqual({
      maxClients: 2,
      idleTimeoutMs: 1000,
      authFailuresPerSession: 5,
      authFailuresPerAddress: 4,
      authFailureWindowMs: 3_600_000,
    });
    expect(() => loadConfig({ GATEPOST_SMTP_AUTH_FAILURES: '0' })).toThrow(/GATEPOST_SMTP_AUTH_FAILURES must be/);
    expect(() => loadConfig({ GATEPOST_SMTP_MAX_CLIENTS: 'many' })).toThrow(/GATEPOST_SMTP_MAX_CLIENTS must be/);
  });
});

describe('loadConfig: the public URL', () => {
  it('reads GATEPOST_PUBLIC_URL without its trailing slash, defaults to none (the API address), and refuses what is no http(s) base URL', () => {
    expect(loadConfig({}).publicUrl).toBeNull();
    expect(loadConfig({ GATEPOST_PUBLIC_URL: 'https://mail.example.com/' }).publicUrl).toBe('https://mail.example.com');
    expect(loadConfig({ GATEPOST_PUBLIC_URL: 'https://example.com/gatepost/' }).publicUrl).toBe('https://example.com/gatepost');
    expect(() => loadConfig({ GATEPOST_PUBLIC_URL: 'mail.example.com' })).toThrow(/GATEPOST_PUBLIC_URL must be a URL/);
    expect(() => loadConfig({ GATEPOST_PUBLIC_URL: 'ftp://mail.example.com' })).toThrow(/http or https/);
    expect(() => loadConfig({ GATEPOST_PUBLIC_URL: 'https://mail.example.com/?a=1' })).toThrow(/no query/);
  });
});

describe('loadConfig: the admin token and the HTTP limits', () => {
  it('refuses an admin token under 32 characters, naming the rule', () => {
    expect(() => loadConfig({ GATEPOST_ADMIN_TOKEN: 'abc' })).toThrow(
      /GATEPOST_ADMIN_TOKEN must be at least 32 characters \(it has 3\)/,
    );
    expect(loadConfig({ GATEPOST_ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toBe('x'.repeat(32));
    expect(loadConfig({ GATEPOST_ADMIN_TOKEN: '' }).adminToken).toBeNull();
  });

  it('reads the HTTP timeouts, and refuses zero', () => {
    expect(loadConfig({}).http).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, idleTimeoutMs: 5_000 });
    expect(
      loadConfig({
        GATEPOST_HTTP_HEADERS_TIMEOUT: '2s',
        GATEPOST_HTTP_REQUEST_TIMEOUT: '1m',
        GATEPOST_HTTP_IDLE_TIMEOUT: '500ms',
      }).http,
    ).toEqual({ headersTimeoutMs: 2_000, requestTimeoutMs: 60_000, idleTimeoutMs: 500 });
    expect(() => loadConfig({ GATEPOST_HTTP_IDLE_TIMEOUT: '0s' })).toThrow(/GATEPOST_HTTP_IDLE_TIMEOUT/);
  });

  it('reads the render limits, defaulting to 1 MiB of output, 10,000 iterations and 1 s, and refuses a value that is not a count', () => {
    expect(loadConfig({}).render).toEqual({ maxOutputBytes: 1_048_576, maxIterations: 10_000, timeoutMs: 1_000 });
    expect(
      loadConfig({
        GATEPOST_RENDER_MAX_OUTPUT_BYTES: '65536',
        GATEPOST_RENDER_MAX_ITERATIONS: '500',
        GATEPOST_RENDER_TIMEOUT_MS: '250',
      }).render,
    ).toEqual({ maxOutputBytes: 65_536, maxIterations: 500, timeoutMs: 250 });
    expect(() => loadConfig({ GATEPOST_RENDER_MAX_OUTPUT_BYTES: '1MiB' })).toThrow(
      'GATEPOST_RENDER_MAX_OUTPUT_BYTES must be a whole number of at least 1, not 1MiB',
    );
    expect(() => loadConfig({ GATEPOST_RENDER_MAX_ITERATIONS: '0' })).toThrow(/GATEPOST_RENDER_MAX_ITERATIONS must be/);
    expect(() => loadConfig({ GATEPOST_RENDER_TIMEOUT_MS: '1s' })).toThrow(/GATEPOST_RENDER_TIMEOUT_MS must be/);
  });
});

describe('loadConfig: direct delivery', () => {
  it('defaults to port 25, 5 connections per MX host, minutes-long timeouts, a 72 h horizon and the machine name in EHLO', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      mxPort: 25,
      mxMaxConnections: 5,
      mxTimeouts: { connectMs: 30_000, greetingMs: 60_000, commandMs: 120_000 },
      deliveryHorizonMs: 72 * 3_600_000,
    });
    expect(c.hostname.length).toBeGreaterThan(0);
  });

  it('reads the environment, and refuses a port, a count or a duration that is not one', () => {
    expect(
      loadConfig({
        GATEPOST_MX_PORT: '2525',
        GATEPOST_MX_MAX_CONNECTIONS: '2',
        GATEPOST_MX_COMMAND_TIMEOUT: '5s',
        GATEPOST_DELIVERY_HORIZON: '1d',
        GATEPOST_HOSTNAME: 'mta.example.com',
      }),
    ).toMatchObject({
      mxPort: 2525,
      mxMaxConnections: 2,
      mxTimeouts: { commandMs: 5_000 },
      deliveryHorizonMs: 86_400_000,
      hostname: 'mta.example.com',
    });
    expect(() => loadConfig({ GATEPOST_MX_PORT: '70000' })).toThrow(/GATEPOST_MX_PORT/);
    expect(() => loadConfig({ GATEPOST_MX_MAX_CONNECTIONS: '0' })).toThrow(/GATEPOST_MX_MAX_CONNECTIONS/);
    expect(() => loadConfig({ GATEPOST_DELIVERY_HORIZON: '0s' })).toThrow(/GATEPOST_DELIVERY_HORIZON/);
  });
});

describe('loadConfig: sending domains', () => {
  it('requires verified domains without a relay, whatever GATEPOST_REQUIRE_VERIFIED_DOMAIN says', () => {
    expect(loadConfig({}).requireVerifiedDomain).toBe(true);
    expect(loadConfig({ GATEPOST_REQUIRE_VERIFIED_DOMAIN: 'false' }).requireVerifiedDomain).toBe(true);
  });

  it('with a relay, requires them only when GATEPOST_REQUIRE_VERIFIED_DOMAIN is true', () => {
    const relay = { GATEPOST_SMTP_RELAY: 'smtp://127.0.0.1:2525' };
    expect(loadConfig(relay).requireVerifiedDomain).toBe(false);
    expect(loadConfig({ ...relay, GATEPOST_REQUIRE_VERIFIED_DOMAIN: 'true' }).requireVerifiedDomain).toBe(true);
    expect(loadConfig({ ...relay, GATEPOST_REQUIRE_VERIFIED_DOMAIN: 'false' }).requireVerifiedDomain).toBe(false);
    expect(() => loadConfig({ ...relay, GATEPOST_REQUIRE_VERIFIED_DOMAIN: 'yes' })).toThrow(/GATEPOST_REQUIRE_VERIFIED_DOMAIN/);
  });

  it('reads what SPF must authorise', () => {
    expect(loadConfig({}).spf).toEqual({ include: null, ips: [] });
    expect(
      loadConfig({ GATEPOST_SPF_INCLUDE: '_spf.mail.example.net', GATEPOST_SENDING_IPS: '192.0.2.7, 2001:db8::7' }).spf,
    ).toEqual({
      include: '_spf.mail.example.net',
      ips: ['192.0.2.7', '2001:db8::7'],
    });
  });

  it('reads the warmup: on for direct delivery and off behind a relay, the ramp SendGrid-style, and refuses what is no cap', () => {
    expect(loadConfig({}).warmup).toEqual({
      enabled: true,
      startPerDay: 50,
      growth: 1.4,
      fullPerDay: 100_000,
      dayMs: 86_400_000,
      windowMs: 3_600_000,
      broadcastShare: 0.8,
      providerShare: 0.5,
      idleMs: 30 * 86_400_000,
    });
    expect(loadConfig({ GATEPOST_SMTP_RELAY: 'smtp://relay.example:25' }).warmup.enabled).toBe(false);
    expect(loadConfig({ GATEPOST_SMTP_RELAY: 'smtp://relay.example:25', GATEPOST_WARMUP: 'true' }).warmup.enabled).toBe(true);
    const short = loadConfig({
      GATEPOST_WARMUP: 'false',
      GATEPOST_WARMUP_START: '4',
      GATEPOST_WARMUP_GROWTH: '2',
      GATEPOST_WARMUP_FULL: '64',
      GATEPOST_WARMUP_DAY: '6s',
      GATEPOST_WARMUP_WINDOW: '2s',
      GATEPOST_WARMUP_BROADCAST_SHARE: '50%',
      GATEPOST_WARMUP_PROVIDER_SHARE: '100',
      GATEPOST_WARMUP_IDLE: '1m',
    }).warmup;
    expect(short).toEqual({
      enabled: false,
      startPerDay: 4,
      growth: 2,
      fullPerDay: 64,
      dayMs: 6000,
      windowMs: 2000,
      broadcastShare: 0.5,
      providerShare: 1,
      idleMs: 60_000,
    });
    expect(() => loadConfig({ GATEPOST_WARMUP_START: '0' })).toThrow(
      /GATEPOST_WARMUP_START must be a whole number of at least 1/,
    );
    expect(() => loadConfig({ GATEPOST_WARMUP_START: '-5' })).toThrow(/GATEPOST_WARMUP_START/);
    expect(() => loadConfig({ GATEPOST_WARMUP_GROWTH: '1' })).toThrow(/GATEPOST_WARMUP_GROWTH must be a factor above 1/);
    expect(() => loadConfig({ GATEPOST_WARMUP_GROWTH: 'fast' })).toThrow(/GATEPOST_WARMUP_GROWTH/);
    expect(() => loadConfig({ GATEPOST_WARMUP_FULL: '10' })).toThrow(
      /GATEPOST_WARMUP_FULL must not be below GATEPOST_WARMUP_START/,
    );
    expect(() => loadConfig({ GATEPOST_WARMUP_WINDOW: '2d' })).toThrow(/GATEPOST_WARMUP_WINDOW must not be longer/);
    expect(() => loadConfig({ GATEPOST_WARMUP_DAY: '0s' })).toThrow(/GATEPOST_WARMUP_DAY/);
    expect(() => loadConfig({ GATEPOST_WARMUP_BROADCAST_SHARE: '0' })).toThrow(/GATEPOST_WARMUP_BROADCAST_SHARE/);
    expect(() => loadConfig({ GATEPOST_WARMUP: 'maybe' })).toThrow(/GATEPOST_WARMUP must be true or false/);
    expect(() => loadConfig({ GATEPOST_METRICS: 'off' })).toThrow(/GATEPOST_METRICS must be true or false/);
    expect([loadConfig({}).metrics, loadConfig({ GATEPOST_METRICS: 'false' }).metrics]).toEqual([true, false]);
  });

  it('reads the source addresses of direct delivery, and refuses what is no address, one listed twice, or a relay beside them', () => {
    expect(loadConfig({}).sourceIps).toEqual([]);
    expect(loadConfig({ GATEPOST_SOURCE_IPS: '203.0.113.10, 2001:db8::1' }).sourceIps).toEqual(['203.0.113.10', '2001:db8::1']);
    expect(() => loadConfig({ GATEPOST_SOURCE_IPS: '203.0.113.10,mail.example' })).toThrow(
      'GATEPOST_SOURCE_IPS: mail.example is not an IP address',
    );
    expect(() => loadConfig({ GATEPOST_SOURCE_IPS: '203.0.113.10,203.0.113.10' })).toThrow(/lists an address twice/);
    expect(() => loadConfig({ GATEPOST_SOURCE_IPS: '203.0.113.10', GATEPOST_SMTP_RELAY: 'smtp://relay.example:25' })).toThrow(
      /GATEPOST_SOURCE_IPS is for direct delivery/,
    );
  });

  it('reads the reputation breaker: defaults below SES and Gmail, percentages as fractions, and refuses what is no rate', () => {
    expect(loadConfig({}).breaker).toEqual({
      windowMs: 86_400_000,
      minSample: 100,
      bounceWarn: 0.04,
      bounceOpen: 0.08,
      complaintWarn: 0.0008,
      complaintOpen: 0.003,
      blockWarn: 0.02,
      blockOpen: 0.05,
      cooldownMs: 3_600_000,
      trickleMs: 60_000,
    });
    const set = loadConfig({
      GATEPOST_BREAKER_BOUNCE_OPEN: '10%',
      GATEPOST_BREAKER_COOLDOWN: '2s',
      GATEPOST_BREAKER_MIN_SAMPLE: '4',
    }).breaker;
    expect(set).toMatchObject({ bounceOpen: 0.1, cooldownMs: 2000, minSample: 4 });
    expect(() => loadConfig({ GATEPOST_BREAKER_BOUNCE_WARN: '0' })).toThrow(/GATEPOST_BREAKER_BOUNCE_WARN must be a percentage/);
    expect(() => loadConfig({ GATEPOST_BREAKER_COMPLAINT_OPEN: '101' })).toThrow(/GATEPOST_BREAKER_COMPLAINT_OPEN must be/);
    expect(() => loadConfig({ GATEPOST_BREAKER_BLOCK_WARN: 'high' })).toThrow(/GATEPOST_BREAKER_BLOCK_WARN must be/);
    expect(() => loadConfig({ GATEPOST_BREAKER_BOUNCE_WARN: '9' })).toThrow(
      /BOUNCE_WARN must not be above GATEPOST_BREAKER_BOUNCE_OPEN/,
    );
    expect(() => loadConfig({ GATEPOST_BREAKER_MIN_SAMPLE: '0' })).toThrow(/GATEPOST_BREAKER_MIN_SAMPLE/);
    expect(() => loadConfig({ GATEPOST_BREAKER_COOLDOWN: '0s' })).toThrow(/GATEPOST_BREAKER_COOLDOWN/);
  });
});

describe('loadConfig: inbound MX', () => {
  it('listens on 2525 for messages up to 25 MiB unless told otherwise, and refuses nonsense', () => {
    expect(loadConfig({})).toMatchObject({ inboundPort: 2525, inboundMaxBytes: 25 * 1024 * 1024 });
    const c = loadConfig({
      GATEPOST_INBOUND_PORT: '25',
      GATEPOST_INBOUND_HOST: '127.0.0.1',
      GATEPOST_INBOUND_MAX_BYTES: '1048576',
    });
    expect(c).toMatchObject({ inboundPort: 25, inboundHost: '127.0.0.1', inboundMaxBytes: 1_048_576 });
    expect(() => loadConfig({ GATEPOST_INBOUND_PORT: '70000' })).toThrow(/GATEPOST_INBOUND_PORT/);
    expect(() => loadConfig({ GATEPOST_INBOUND_MAX_BYTES: '0' })).toThrow(/GATEPOST_INBOUND_MAX_BYTES/);
  });

  it("presents submission's certificate unless given its own, and takes a certificate only with its key", () => {
    const submission = { GATEPOST_SMTP_TLS_CERT: 'smtp.crt', GATEPOST_SMTP_TLS_KEY: 'smtp.key' };
    expect(loadConfig(submission).inboundTls).toBeNull();
    const own = loadConfig({ ...submission, GATEPOST_INBOUND_TLS_CERT: 'mx.crt', GATEPOST_INBOUND_TLS_KEY: 'mx.key' });
    expect(own.inboundTls).toEqual({ cert: resolve('mx.crt'), key: resolve('mx.key') });
    expect(own.smtpTls).toEqual({ cert: resolve('smtp.crt'), key: resolve('smtp.key') });
    expect(() => loadConfig({ GATEPOST_INBOUND_TLS_CERT: 'mx.crt' })).toThrow(
      'GATEPOST_INBOUND_TLS_CERT and GATEPOST_INBOUND_TLS_KEY go together',
    );
    expect(() => loadConfig({ GATEPOST_SMTP_TLS_KEY: 'smtp.key' })).toThrow(
      'GATEPOST_SMTP_TLS_CERT and GATEPOST_SMTP_TLS_KEY go together',
    );
  });
});
