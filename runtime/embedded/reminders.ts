// Reminder timing for the embedded runtime. Only reminders due within the next `horizonMs` are
// held in memory (a min-heap); the rest wait in SQLite and are loaded as the horizon moves on,
// so a million messages scheduled days ahead cost no memory until their day comes.
import type { Db } from '../../lib/sqlite.ts';

export interface DueReminder {
  actorType: string;
  actorId: string;
  name: string;
  dueAt: number;
  data: string | null;
}

/** A reminder's identity: its actor and its name. */
export const reminderKey = (r: { actorType: string; actorId: string; name: string }) => `${r.actorType}\0${r.actorId}\0${r.name}`;

export class ReminderClock {
  private heap: DueReminder[] = [];
  /** The reminder each key currently has in memory; heap entries that are not it are stale. */
  private current = new Map<string, DueReminder>();
  private loadedUntil = 0;
  private timer: NodeJS.Timeout | null = null;
  /** When the timer wakes; a reminder due later needs no new timer. */
  private wakeAt = Infinity;
  private stopped = true;
  private readonly selectWindow;

  constructor(
    db: Db,
    private readonly fire: (reminder: DueReminder) => void,
    // Shorter than a message's watchdog (30 s, actors/message): every send sets one, and its
    // outcome moves it to the end of retention milliseconds later. Held in memory, each was a
    // heap entry and an object kept for 30 s; beyond the horizon it stays on disk, and is loaded
    // only if it is still due when the horizon reaches it. (60 s cost about 5 % of a send.)
    private readonly horizonMs = 20_000,
  ) {
    this.selectWindow = db.prepare(
      `SELECT actor_type AS actorType, actor_id AS actorId, name, due_at AS dueAt, data
       FROM reminders WHERE due_at > ? AND due_at <= ?`,
    );
  }

  start(): void {
    this.stopped = false;
    this.loadedUntil = -Infinity;
    this.extendHorizon();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A committed reminder write: schedule it if it falls inside the loaded horizon. */
  set(reminder: DueReminder): void {
    const key = reminderKey(reminder);
    if (reminder.dueAt > this.loadedUntil) {
      this.current.delete(key);
      return;
    }
    this.current.set(key, reminder);
    this.schedule(reminder);
  }

  delete(reminder: { actorType: string; actorId: string; name: string }): void {
    this.current.delete(reminderKey(reminder));
  }

  /** Puts a reminder whose turn failed back in memory, to be tried again at `dueAt`. */
  retry(reminder: DueReminder): void {
    this.current.set(reminderKey(reminder), reminder);
    this.schedule(reminder);
  }

  /** Into the heap; the timer is set again only for a reminder due before it wakes. */
  private schedule(reminder: DueReminder): void {
    this.push(reminder);
    if (reminder.dueAt < this.wakeAt) this.arm();
  }

  get pending(): number {
    return this.current.size;
  }

  private extendHorizon(): void {
    const until = Date.now() + this.horizonMs;
    const rows = this.selectWindow.all(this.loadedUntil === -Infinity ? -1 : this.loadedUntil, until) as DueReminder[];
    this.loadedUntil = until;
    for (const r of rows) {
      const key = reminderKey(r);
      const existing = this.current.get(key);
      if (existing && existing.dueAt === r.dueAt) continue;
      this.current.set(key, r);
      this.push(r);
    }
    this.arm();
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const next = this.heap[0]?.dueAt ?? Infinity;
    // Wake for the next reminder, or to load the next slice of the horizon, whichever is sooner.
    this.wakeAt = Math.min(next, this.loadedUntil - this.horizonMs / 2);
    this.timer = setTimeout(() => this.tick(), Math.max(0, Math.min(this.wakeAt - Date.now(), 2 ** 31 - 1)));
  }

  private tick(): void {
    this.timer = null;
    this.wakeAt = Infinity;
    if (this.stopped) return;
    const now = Date.now();
    if (now >= this.loadedUntil - this.horizonMs / 2) this.extendHorizon();
    while (this.heap.length > 0 && this.heap[0]!.dueAt <= now) {
      const r = this.pop();
      const key = reminderKey(r);
      if (this.current.get(key) !== r) continue; // replaced or deleted since it was pushed
      this.current.delete(key);
      this.fire(r);
    }
    this.arm();
  }

  private push(r: DueReminder): void {
    // A message's watchdog is set when it is queued and moved out of the horizon once delivered,
    // a few ms later: its entry stays in the heap until its time. Past twice the live entries,
    // the heap is rebuilt from them, so memory follows what is due rather than what was set.
    if (this.heap.length >= 2 * this.current.size + 1024) this.rebuild();
    const h = this.heap;
    h.push(r);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.dueAt <= h[i]!.dueAt) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  private rebuild(): void {
    this.heap = [...this.current.values()].sort((a, b) => a.dueAt - b.dueAt);
  }

  private pop(): DueReminder {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l]!.dueAt < h[m]!.dueAt) m = l;
        if (r < h.length && h[r]!.dueAt < h[m]!.dueAt) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}
