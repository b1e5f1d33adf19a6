// Opens and clicks as both catalogs store them (migrations/013_engagement.sql): one row an event,
// its data as the JSON text it was published with.
import type { EventType, StoredEvent } from '../events/email.event.ts';

export interface EngagementRow {
  event_id: string;
  type: string;
  created_at: string;
  data: string;
}

export function storedEngagement(row: EngagementRow): StoredEvent {
  return {
    id: row.event_id,
    type: row.type as EventType,
    created_at: row.created_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}
