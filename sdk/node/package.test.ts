// sdk/node as a package a user installs: built with its own tsconfig (npm run build), laid out
// in a node_modules folder as npm installs it, then imported by name, through its `exports`, from
// JavaScript and from TypeScript checked against its declarations.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SDK = join(ROOT, 'sdk/node');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const manifest = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8'));
// In the checkout, so that the consumer finds jose and @types/node as a user's project would.
const project = join(ROOT, '.vitest-tmp', `sdk-package-${process.pid}`);
const installed = join(project, 'node_modules', manifest.name);

beforeAll(() => {
  mkdirSync(installed, { recursive: true });
  execFileSync(process.execPath, [TSC, '-p', join(SDK, 'tsconfig.json'), '--outDir', join(installed, 'dist')], {
    stdio: 'inherit',
  });
  for (const f of manifest.files as string[]) if (f !== 'dist') cpSync(join(SDK, f), join(installed, f));
  writeFileSync(join(installed, 'package.json'), JSON.stringify(manifest));
}, 120_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe(`${manifest.name}`, () => {
  it('imports by name from JavaScript: the client, the webhook and receipt helpers, and its subpaths', () => {
    writeFileSync(
      join(project, 'use.mjs'),
      `import { Gatepost, GatepostError, OPERATIONS, verifyWebhook, verifyReceipt } from '${manifest.name}';
import { computeSignature } from '${manifest.name}/webhooks';
import { receiptHash } from '${manifest.name}/receipts';
const gp = new Gatepost({ apiKey: 'gp_sandbox_x', baseUrl: 'http://localhost:3000/' });
console.log(JSON.stringify([gp.baseUrl, typeof verifyWebhook, typeof verifyReceipt, typeof computeSignature, typeof receiptHash, new GatepostError('x', 'm', 400).code, OPERATIONS.send.path]));`,
    );
    const out = execFileSync(process.execPath, [join(project, 'use.mjs')], { cwd: project }).toString();
    expect(JSON.parse(out)).toEqual(['http://localhost:3000', 'function', 'function', 'function', 'function', 'x', '/v1/emails']);
  });

  it('type-checks a TypeScript user of its declarations, and refuses a wrong call', () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['use.ts'],
      }),
    );
    const check = (code: string) => {
      writeFileSync(join(project, 'use.ts'), code);
      try {
        execFileSync(process.execPath, [TSC, '-p', join(project, 'tsconfig.json')], { cwd: project });
        return '';
      } catch (error) {
        return (error as { stdout: Buffer }).stdout.toString();
      }
    };
    const good = `import { Gatepost, type Message, type SendResult } from '${manifest.name}';
const gp = new Gatepost({ apiKey: 'k' });
export async function f(): Promise<[SendResult, Message['status']]> {
  const sent = await gp.send({ to: 'a@example.com', subject: 's', html: 'h' });
  return [sent, (await gp.messages.get(sent.id)).status];
}`;
    expect(check(good)).toBe('');
    expect(check(`import { Gatepost } from '${manifest.name}';\nnew Gatepost().send({ to: 1 });`)).toMatch(/error TS2322/);
  }, 120_000);
});
