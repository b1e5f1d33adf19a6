// The seam between the inbound MX and bounce and complaint processing: mail that arrives at a
// sending domain's return-path domain (`bounces.<domain>`, where VERP addresses and the
// feedback-loop address live) is not routed to a customer; the listener hands it over here.
// The listener owns the SMTP session and the spooled raw message; the intake owns what the
// message means (a DSN, an ARF report, or neither) and what follows from it.

/** One message received for an address on a return-path domain. */
export interface ArrivedReport {
  /** The envelope recipient on the return-path domain (a VERP address or the feedback-loop address). */
  rcpt: string;
  /** The envelope sender, `''` for the null reverse-path DSNs use. */
  mailFrom: string;
  /** The raw message as received, already within the listener's size limit. */
  raw: Buffer;
  /** The connecting client's address. */
  remoteAddress: string;
  /** ISO time the message was received. */
  receivedAt: string;
}

export interface ReportIntake {
  /** Settles once what the report says is durable (or the report is kept as unrecognised): the listener answers 250 after it. */
  take(report: ArrivedReport): Promise<void>;
}
