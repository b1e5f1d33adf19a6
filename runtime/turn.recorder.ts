// What a turn asks for besides state: reminders to set or delete and messages to publish. Each
// adapter's turn records them here and applies them when the turn commits. Most turns ask for
// neither (a check, a read), so nothing is allocated until one does: a send runs several turns.
export type ReminderWrite = { dueAt: number; data: unknown } | null;

const NO_REMINDERS: ReadonlyMap<string, ReminderWrite> = new Map();
const NOTHING_PUBLISHED: readonly { topic: string; data: unknown }[] = Object.freeze([]);

export abstract class TurnRecorder {
  private reminders: Map<string, ReminderWrite> | null = null;
  private publications: { topic: string; data: unknown }[] | null = null;

  abstract get<T>(key: string): Promise<T | undefined>;

  /** Read like any key, unless the adapter can take it as absent (ActorTurn.getNew). */
  getNew<T>(key: string): Promise<T | undefined> {
    return this.get<T>(key);
  }

  /** Reminder name → its new registration, or null to delete it. */
  get reminderWrites(): ReadonlyMap<string, ReminderWrite> {
    return this.reminders ?? NO_REMINDERS;
  }

  get published(): readonly { topic: string; data: unknown }[] {
    return this.publications ?? NOTHING_PUBLISHED;
  }

  setReminder(name: string, dueAt: number, data?: unknown): void {
    (this.reminders ??= new Map()).set(name, { dueAt, data });
  }

  deleteReminder(name: string): void {
    (this.reminders ??= new Map()).set(name, null);
  }

  publish(topic: string, data: unknown): void {
    (this.publications ??= []).push({ topic, data });
  }

  /** Kept for after the commit like any publication, unless the adapter publishes it sooner. */
  handOver(topic: string, data: unknown): void {
    this.publish(topic, data);
  }

  /** Kept for after the commit like any publication, unless the adapter can keep less. */
  publishAgainOnReplay(topic: string, data: unknown): void {
    this.publish(topic, data);
  }
}
