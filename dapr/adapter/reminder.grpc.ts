// Registers actor reminders over daprd's gRPC API, the only one that sets a reminder's failure
// policy. daprd 1.18's HTTP reminder API decodes its body with encoding/json into a protobuf
// oneof, which cannot take `failure_policy`; without one, a reminder that comes due while the app
// is down (its daprd up) is triggered three times a second apart, then dropped for good. Every
// reminder registered here is tried again every RETRY_INTERVAL_S until the app takes it
// (test/dapr/reminders.dapr.test.ts).
//
// The request is the subset of dapr/proto/runtime/v1/actors.proto (daprd 1.18.2) the adapter
// sets; protobuf needs only the field numbers to match. The answer is google.protobuf.Empty.
import { Client, credentials, type ServiceError } from '@grpc/grpc-js';
import protobuf from 'protobufjs';

const PROTO = `
syntax = "proto3";
message Duration { int64 seconds = 1; int32 nanos = 2; }
message JobFailurePolicyConstant { Duration interval = 1; optional uint32 max_retries = 2; }
message JobFailurePolicy { oneof policy { JobFailurePolicyConstant constant = 2; } }
message RegisterActorReminderRequest {
  string actor_type = 1;
  string actor_id = 2;
  string name = 3;
  string due_time = 4;
  bytes data = 6;
  JobFailurePolicy failure_policy = 9;
}
`;
const Request = protobuf.parse(PROTO, { keepCase: true }).root.lookupType('RegisterActorReminderRequest');
const METHOD = '/dapr.proto.runtime.v1.Dapr/RegisterActorReminder';

/**
 * How long the scheduler waits between tries of a reminder the app did not take. No limit on the
 * tries: a reminder is dropped only when its handler ran. Each try at a down app costs a refused
 * connection; 5 s keeps that small when many reminders are due at once.
 */
const RETRY_INTERVAL_S = 5;

export interface ReminderRegistration {
  type: string;
  id: string;
  name: string;
  /** RFC 3339 time, or a Go duration ("0s": now). */
  dueTime: string;
  /** JSON; daprd hands it to the app as base64 of these bytes (`decodeReminderData`). */
  data: string;
}

export class ReminderRegistrar {
  private readonly client: Client;

  constructor(daprGrpcPort: number, host = '127.0.0.1') {
    this.client = new Client(`${host}:${daprGrpcPort}`, credentials.createInsecure());
  }

  register(r: ReminderRegistration, timeoutMs: number): Promise<void> {
    const message = Request.fromObject({
      actor_type: r.type,
      actor_id: r.id,
      name: r.name,
      due_time: r.dueTime,
      data: Buffer.from(r.data),
      failure_policy: { constant: { interval: { seconds: RETRY_INTERVAL_S } } },
    });
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        METHOD,
        (m: protobuf.Message) => Buffer.from(Request.encode(m).finish()),
        () => undefined,
        message,
        { deadline: Date.now() + timeoutMs },
        (error: ServiceError | null) =>
          error ? reject(new Error(`reminder set ${r.type}/${r.id}/${r.name}: gRPC ${error.code}: ${error.details}`)) : resolve(),
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

/**
 * The data of a reminder as the app receives it: daprd's gRPC API stores the request's bytes, and
 * the reminder's callback carries them JSON-encoded, so as a base64 string.
 */
export function decodeReminderData(data: unknown): unknown {
  if (typeof data !== 'string') throw new Error(`reminder data is not base64: ${JSON.stringify(data)}`);
  return JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
}
