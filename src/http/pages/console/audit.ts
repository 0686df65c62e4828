// GET /console/audit?tenant=ID: the audit trail of a tenant and the tenants below it, with the
// filters of the auditEvents query (from, to, actor, action, outcome, tenant) and its cursor
// pagination, through the same AuditService.list as the GraphQL resolver. Bad filters show the
// form again with what was wrong (400), and no events.
import { auditTrail, type AuditFilterValues } from './audit-views.js';
import { formTime } from './form-times.js';
import { type ConsoleKit, PER_PAGE, queryOf, text } from './kit.js';

/** A time typed in the form (form-times.ts), or undefined when empty. */
function timeOf(raw: string, field: 'from' | 'to'): Date | undefined {
  const d = formTime(raw, `filter.${field}`);
  // "to" takes in the whole minute typed
  return d && field === 'to' && raw.length === 16 ? new Date(d.getTime() + 59_999) : d;
}

export function auditPages(c: ConsoleKit) {
  return {
    /** GET /console/audit?tenant=…&from=…&to=…&actor=…&action=…&outcome=…&in=…&after=… */
    trail: c.page(async (t, req, reply) => {
      const q = queryOf(req);
      const values: AuditFilterValues = {
        from: text(q.from)?.trim() ?? '',
        to: text(q.to)?.trim() ?? '',
        actor: text(q.actor)?.trim() ?? '',
        action: text(q.action)?.trim() ?? '',
        outcome: text(q.outcome)?.trim() ?? '',
        in: text(q.in)?.trim() ?? '',
      };
      const after = text(q.after) || undefined;
      try {
        const page = await c.services.audit.list(t.caller, {
          filter: {
            from: timeOf(values.from, 'from'),
            to: timeOf(values.to, 'to'),
            actor: values.actor || undefined,
            action: values.action || undefined,
            outcome: values.outcome || undefined,
            tenantID: values.in || undefined,
          },
          after,
          first: PER_PAGE,
        });
        return c.show(reply, 200, auditTrail({ tenant: t.tenant, values, page, after }), { who: t, in: t, section: 'audit' });
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        return c.show(reply, problem.status, auditTrail({ tenant: t.tenant, values, problem, after }), { who: t, in: t, section: 'audit' });
      }
    }),
  };
}
