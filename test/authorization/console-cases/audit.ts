// The audit trail page (src/http/pages/console/audit.ts) in the page matrix.
import assert from 'node:assert/strict';
import { createClient } from '../../helpers/seed.js';
import type { PageCase } from './types.js';

export const AUDIT_CASES: PageCase[] = [
  {
    route: 'GET /console/audit',
    row: 'auditEvents',
    // an event of C1, the newest (the trail is newest first): a client created there by the root Administrator
    prepare: async (w) => {
      w.t.clock.advance(1000);
      return { made: await createClient(w.t, w.rootToken, w.unique('audited'), { tenant: w.C1 }) };
    },
    request: (w) => ({ path: `/console/audit?tenant=${w.C1}&action=client.created` }),
    effect: async (_w, s, res) => assert.match(res.text, new RegExp(`data-label="Target">client <code>${s.made.id}</code>`)),
  },
];
