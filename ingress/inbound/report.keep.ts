// Until bounce and complaint processing lands (the `reports` branch of issue 23 item 4), mail
// for a return-path address is kept as a received message of the domain's owner, kind `report`,
// visible in GET /v1/inbound/messages and posted nowhere: recorded, never dropped.
import { newId } from '../../lib/ids.ts';
import type { Catalog } from '../../store/catalog.port.ts';
import type { InboundRoutes } from '../../tenancy/inbound.routes.ts';
import { parseInbound } from './inbound.payload.ts';
import type { ReportIntake } from './report.intake.ts';

const UNCHECKED = {
  spf: { result: 'none', domain: null },
  dkim: [],
  dmarc: { result: 'none', domain: null, policy: null, alignment: { spf: null, dkim: null } },
  arc: { result: 'none', instance: null },
};

export function keptReports(catalog: Catalog, routes: InboundRoutes): ReportIntake {
  return {
    async take(report) {
      const answer = await routes.recipient(report.rcpt);
      // The listener only hands over addresses it found on a return-path domain; one whose domain
      // was deleted in between is refused upstream on the next attempt.
      if (answer.kind !== 'report') throw new Error(`${report.rcpt} is no longer on a return-path domain`);
      // A report's sender is a receiving MTA: its verdicts say nothing the report processing needs.
      const { payload, attachments } = await parseInbound(report.raw, UNCHECKED);
      await catalog.putInboundMessage({
        id: newId('inm'),
        tenant_id: answer.tenant_id,
        route_id: null,
        kind: 'report',
        mail_from: report.mailFrom,
        rcpt_to: [report.rcpt],
        remote_address: report.remoteAddress,
        received_at: report.receivedAt,
        payload,
        raw: report.raw,
        attachments,
      });
    },
  };
}
