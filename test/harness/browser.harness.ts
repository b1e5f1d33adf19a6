// A real browser for the browser SDK tests: Debian's Chromium driven by playwright-core (never a
// downloaded browser), and small web servers whose pages load the official @emailjs/browser
// bundle, each server its own origin. Chromium's background networking is off: this machine's
// network is closed, and Chromium's own connections would otherwise be refused noisily.
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from './gatepost.harness.ts';

export const CHROMIUM = '/usr/bin/chromium';

const SDK = readFileSync(fileURLToPath(import.meta.resolve('@emailjs/browser/dist/email.js')), 'utf8');

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Contact</title><script src="/email.js"></script></head>
<body>
  <form id="contact">
    <input name="name" value="Ann">
    <textarea name="message">Hello from the page</textarea>
    <input type="file" name="upload">
  </form>
</body></html>`;

/** A web server on 127.0.0.1 serving the page and the SDK: its URL is the page's origin. */
export interface PageServer {
  origin: string;
  close(): Promise<void>;
}

/** Scripts served beside the page, by path: `/gatepost.js` → its JavaScript. */
export type Scripts = Record<string, string>;

export async function startPageServer(scripts: Scripts = {}): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    const script = Object.hasOwn(scripts, req.url ?? '') ? scripts[req.url!] : undefined;
    if (script !== undefined) {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    } else if (req.url === '/email.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(SDK);
    } else if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface Chromium {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile. */
export async function launchChromium(): Promise<Chromium> {
  const profile = tempDir('chromium-profile');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      // Chromium's helper processes may still be writing as it exits: retry, and leave a temporary
      // directory behind rather than fail a test over it.
      await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => {});
    },
  };
}

/** A tab on the page served at `origin`, the SDK loaded. */
export async function openPage(context: BrowserContext, origin: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => typeof (globalThis as { emailjs?: unknown }).emailjs === 'object');
  return page;
}
