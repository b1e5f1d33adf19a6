// /v1/reports and /v1/admin/reports: every message received at a return-path domain (bounces,
// complaints, and what could not be tied to a message), as the catalog keeps them (docs/bounces.md).
import type { Catalog, ReceivedReport } from '../../store/catalog.port.ts';
import { senderOf } from './auth.hooks.ts';
import { answer, type ZodApp } from './schema.http.ts';
import { AdminReportView, PageQuery, ReportView, pageOf } from './schemas.ts';

const view = ({ tenant_id: _t, ...r }: ReceivedReport) => r;

/** The tenant's own: reports that arrived at its return-path domains. */
export function reportRoutes(app: ZodApp, catalog: Catalog): void {
  app.get(
    '/v1/reports',
    {
      config: { access: 'manage' },
      schema: {
        tags: ['Reports'],
        summary: 'List bounces and complaints received at your return-path domains, recognised or not',
        querystring: PageQuery,
        response: { 200: answer('A page of reports, newest first.', pageOf(ReportView)) },
      },
    },
    async (request, reply) => {
      const page = await catalog.listReports({ ...request.query, tenant_id: senderOf(request).tenant.id });
      return reply.code(200).send({ data: page.data.map(view), next_cursor: page.next_cursor });
    },
  );
}

/** Every tenant's, and those that arrived for a domain no tenant has verified. */
export function reportAdminRoutes(app: ZodApp, catalog: Catalog): void {
  app.get(
    '/v1/admin/reports',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['Admin'],
        summary: 'List every report received at a return-path domain, of all tenants',
        querystring: PageQuery,
        response: { 200: answer('A page of reports, newest first.', pageOf(AdminReportView)) },
      },
    },
    async (request, reply) => reply.code(200).send(await catalog.listReports(request.query)),
  );
}
