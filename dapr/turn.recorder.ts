// What a turn asks for besides state: reminders to set or delete and messages to publish. Each
// adapter's turn records them here and applies them when the turn commits.
export abstract class TurnRecorder {
  /** Reminder name → its new registration, or null to delete it. */
  readonly reminderWrites = new Map<string, { dueAt: number; data: unknown } | null>();
  readonly published: { topic: string; data: unknown }[] = [];

  setReminder(name: string, dueAt: number, data?: unknown): void {
    this.reminderWrites.set(name, { dueAt, data });
  }

  deleteReminder(name: string): void {
    this.reminderWrites.set(name, null);
  }

  publish(topic: string, data: unknown): void {
    this.published.push({ topic, data });
  }
}
