// An automation's steps as a client writes them, checked whole before anything is stored
// (docs/automations.md#steps): every wait a duration in bounds, every reference a step of the
// right kind, no cycle, every template there. The first fault found is the refusal.
import { GatepostError, invalid, type ErrorCode } from '../errors/errors.catalog.ts';
import { parseMailbox } from '../mail/address.ts';
import type { AutomationStep, Catalog } from '../store/catalog.port.ts';

/** A wait's bounds: at least a second, at most 30 days (the longest a send may be scheduled ahead). */
export const MIN_WAIT_SECONDS = 1;
export const MAX_WAIT_SECONDS = 30 * 24 * 3600;

/** The target of an `if` branch that ends the run. */
export const END = 'end';

/** A step as given: a wait's seconds are read from its duration here. */
export type StepInput = AutomationStep extends infer S ? (S extends { type: 'wait' } ? Omit<S, 'seconds'> : S) : never;

// Days, hours, minutes and seconds (weeks too): years and months have no fixed length.
const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Seconds of an ISO 8601 duration (`PT10M`, `P2D`, `P1DT12H`) or of a number of seconds; null when it is neither. */
export function durationSeconds(duration: string | number): number | null {
  if (typeof duration === 'number') return Number.isFinite(duration) ? duration : null;
  const m = ISO_DURATION.exec(duration);
  if (!m || duration === 'P' || duration.endsWith('T')) return null;
  const [w, d, h, min, s] = m.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number];
  return (((w * 7 + d) * 24 + h) * 60 + min) * 60 + s;
}

const refusal = (code: ErrorCode, field: string, message: string) =>
  new GatepostError(code, `The automation is refused: ${field} ${message}.`, { details: [{ field, message }] });

/** The step after each step: its `then` and `else` for an `if`, the next in order for the others (`end` past the last). */
function edgesOf(steps: readonly StepInput[], at: number): string[] {
  const next = steps[at + 1]?.id ?? END;
  const step = steps[at]!;
  return step.type === 'if' ? [step.then ?? next, step.else ?? next] : [next];
}

/** Refuses what names no step, or a step of the wrong kind. */
function checkReferences(steps: readonly StepInput[]): void {
  const seen = new Map<string, StepInput>();
  steps.forEach((step, i) => {
    if (step.id === END || seen.has(step.id)) {
      throw invalid(
        [
          {
            field: `steps[${i}].id`,
            message: step.id === END ? `"${END}" is kept for ending a run` : 'another step has this id',
          },
        ],
        `The automation is refused: step ids must be unique, and not "${END}".`,
      );
    }
    seen.set(step.id, step);
    if (step.type !== 'if') return;
    const conditions = [step.opened, step.clicked].filter((c) => c !== undefined);
    if (conditions.length !== 1) {
      throw invalid([{ field: `steps[${i}]`, message: 'an if step has one of opened or clicked' }]);
    }
    const earlier = seen.get(conditions[0]!);
    if (!earlier || earlier.type !== 'send') {
      const which = step.opened !== undefined ? 'opened' : 'clicked';
      throw refusal('automation_step_unknown', `steps[${i}].${which}`, `is not the id of an earlier send step`);
    }
  });
  steps.forEach((step, i) => {
    if (step.type !== 'if') return;
    for (const branch of ['then', 'else'] as const) {
      const target = step[branch];
      if (target !== undefined && target !== END && !seen.has(target)) {
        throw refusal('automation_step_unknown', `steps[${i}].${branch}`, `names no step ("${target}")`);
      }
    }
  });
}

/** Refuses a way round: a depth-first walk from every step that finds a step still on its path. */
function checkCycles(steps: readonly StepInput[]): void {
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const state = new Array<'open' | 'done' | undefined>(steps.length);
  const visit = (at: number): void => {
    state[at] = 'open';
    for (const target of edgesOf(steps, at)) {
      const to = index.get(target);
      if (to === undefined || state[to] === 'done') continue;
      if (state[to] === 'open') {
        throw refusal('automation_cycle', `steps[${at}]`, `leads back to step "${target}", a run would never end`);
      }
      visit(to);
    }
    state[at] = 'done';
  };
  steps.forEach((_, i) => state[i] === undefined && visit(i));
}

/** The steps checked, each wait with its seconds, or the first refusal: nothing is stored on a refusal. */
export async function checkedSteps(catalog: Catalog, tenantId: string, steps: readonly StepInput[]): Promise<AutomationStep[]> {
  const checked = steps.map((step, i): AutomationStep => {
    if (step.type !== 'wait') return step;
    const seconds = durationSeconds(step.duration);
    if (seconds === null || seconds < MIN_WAIT_SECONDS || seconds > MAX_WAIT_SECONDS) {
      throw refusal(
        'automation_wait_out_of_range',
        `steps[${i}].duration`,
        seconds === null ? 'is not an ISO 8601 duration or a number of seconds' : 'is not between 1 second and 30 days',
      );
    }
    return { ...step, seconds };
  });
  checkReferences(steps);
  checkCycles(steps);
  for (const [i, step] of steps.entries()) {
    if (step.type !== 'send') continue;
    if (!parseMailbox(step.from)) throw invalid([{ field: `steps[${i}].from`, message: 'not a valid mailbox' }]);
    if (!(await catalog.getTemplate(tenantId, step.template))) {
      throw refusal('template_not_found', `steps[${i}].template`, `names no template ("${step.template}")`);
    }
  }
  return checked;
}
