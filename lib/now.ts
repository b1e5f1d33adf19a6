// The current time as an ISO 8601 string, made once a millisecond. A send stamps several times
// (its creation, each event, its capture, its quota day), and `Date#toISOString` costs a few
// hundred nanoseconds each time; within one millisecond the string is the same.
let lastMs = -1;
let lastIso = '';

/** `new Date(ms).toISOString()`, of now unless told another time. */
export function isoTime(ms = Date.now()): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** The UTC day (YYYY-MM-DD) of now, unless told another time. */
export const utcDay = (ms = Date.now()): string => isoTime(ms).slice(0, 10);
