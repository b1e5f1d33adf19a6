// An automation's steps checked against a real SQLite catalog (its templates): durations read and
// bounded, references, cycles and templates refused with their codes, naming the step at fault.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatepostError, type ErrorCode } from '../errors/errors.catalog.ts';
import { SqliteCatalog } from '../store/sqlite/catalog.sqlite.ts';
import { checkedSteps, durationSeconds, type StepInput } from './automation.steps.ts';

const TENANT = 'ten_steps';
let dir: string;
let catalog: SqliteCatalog;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatepost-steps-test-'));
  catalog = new SqliteCatalog(join(dir, 'catalog.db'));
  await catalog.createTenant({ id: TENANT, name: 't', default_from: null, quota: { per_second: null, per_day: null } });
  await catalog.createTemplate(TENANT, 'tpl_welcome', {
    slug: 'welcome',
    name: null,
    subject: 'Hi {{name}}',
    html: '<p>Hi</p>',
    text: null,
    from: null,
    to: null,
    reply_to: null,
  });
});
afterAll(async () => {
  await catalog.close();
  await rm(dir, { recursive: true, force: true });
});

const send = (id: string): StepInput => ({ id, type: 'send', template: 'welcome', from: 'Shop <hi@shop.example>' });
const wait = (id: string, duration: string | number): StepInput => ({ id, type: 'wait', duration });

async function refused(steps: StepInput[], code: ErrorCode, field: string): Promise<void> {
  const error = await checkedSteps(catalog, TENANT, steps).then(
    () => expect.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatepostError);
  expect(error).toMatchObject({ code, details: [{ field }] });
}

describe('durations', () => {
  it('reads ISO 8601 days, hours, minutes, seconds and weeks, and numbers of seconds', () => {
    expect(durationSeconds('PT10M')).toBe(600);
    expect(durationSeconds('P2D')).toBe(172_800);
    expect(durationSeconds('P1DT12H30M5S')).toBe(131_405);
    expect(durationSeconds('P1W')).toBe(604_800);
    expect(durationSeconds('PT1.5S')).toBe(1.5);
    expect(durationSeconds(90)).toBe(90);
    for (const bad of ['P1M', 'P1Y', 'PT', 'P', '10 minutes', '', 'pt10m']) expect(durationSeconds(bad)).toBeNull();
  });
});

describe('checkedSteps', () => {
  it('answers the steps with each wait in seconds', async () => {
    const steps: StepInput[] = [
      wait('pause', 'PT10M'),
      send('hello'),
      wait('later', 2),
      { id: 'check', type: 'if', opened: 'hello', then: 'end' },
      send('nudge'),
    ];
    expect(await checkedSteps(catalog, TENANT, steps)).toEqual([
      { id: 'pause', type: 'wait', duration: 'PT10M', seconds: 600 },
      send('hello'),
      { id: 'later', type: 'wait', duration: 2, seconds: 2 },
      { id: 'check', type: 'if', opened: 'hello', then: 'end' },
      send('nudge'),
    ]);
  });

  it('refuses a wait out of bounds or that is no duration', async () => {
    await refused([wait('w', 0.5)], 'automation_wait_out_of_range', 'steps[0].duration');
    await refused([send('s'), wait('w', 'P31D')], 'automation_wait_out_of_range', 'steps[1].duration');
    await refused([wait('w', 'P1M')], 'automation_wait_out_of_range', 'steps[0].duration');
    expect(await checkedSteps(catalog, TENANT, [wait('w', 'P30D')])).toHaveLength(1);
  });

  it('refuses a reference to no step, to a step of the wrong kind, or to a later send', async () => {
    await refused([send('s'), { id: 'c', type: 'if', opened: 'nope' }], 'automation_step_unknown', 'steps[1].opened');
    await refused([wait('w', 5), { id: 'c', type: 'if', clicked: 'w' }], 'automation_step_unknown', 'steps[1].clicked');
    await refused([{ id: 'c', type: 'if', opened: 's' }, send('s')], 'automation_step_unknown', 'steps[0].opened');
    await refused([send('s'), { id: 'c', type: 'if', opened: 's', else: 'gone' }], 'automation_step_unknown', 'steps[1].else');
  });

  it('refuses a cycle, naming the step that closes it', async () => {
    const loop: StepInput[] = [send('s'), wait('w', 60), { id: 'c', type: 'if', opened: 's', else: 'w' }];
    await refused(loop, 'automation_cycle', 'steps[2]');
    // Onto itself.
    await refused([send('s'), { id: 'c', type: 'if', clicked: 's', then: 'c' }], 'automation_cycle', 'steps[1]');
    // A jump forward is no cycle.
    const forward: StepInput[] = [send('s'), { id: 'c', type: 'if', opened: 's', then: 'last' }, send('mid'), send('last')];
    expect(await checkedSteps(catalog, TENANT, forward)).toHaveLength(4);
  });

  it('refuses an unknown template, repeated ids and an if with no condition or two', async () => {
    await refused([send('s'), { ...send('t'), template: 'missing' } as StepInput], 'template_not_found', 'steps[1].template');
    await refused([send('s'), send('s')], 'invalid_request', 'steps[1].id');
    await refused([send('end')], 'invalid_request', 'steps[0].id');
    await refused([send('s'), { id: 'c', type: 'if' }], 'invalid_request', 'steps[1]');
    await refused([send('s'), { id: 'c', type: 'if', opened: 's', clicked: 's' }], 'invalid_request', 'steps[1]');
  });
});
