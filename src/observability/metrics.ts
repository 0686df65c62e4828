// What the service counts, one Prometheus registry per service (tests build many in one process).
// Below the capabilities, so that any of them (the token endpoint counts tokens) can count
// without knowing the HTTP transport that serves the numbers (http/metrics.ts).
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Histogram<'method' | 'route' | 'status'>;
  tokensIssued: Counter<'grant_type'>;
  tokenErrors: Counter<'error'>;
  ssoDomainChecks: Counter<'outcome'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Histogram({
      name: 'gatehouse_http_request_duration_seconds',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    tokensIssued: new Counter({
      name: 'gatehouse_tokens_issued_total',
      help: 'Access tokens issued, by grant type',
      labelNames: ['grant_type'],
      registers: [registry],
    }),
    tokenErrors: new Counter({
      name: 'gatehouse_token_errors_total',
      help: 'Token-endpoint errors, by OAuth error code',
      labelNames: ['error'],
      registers: [registry],
    }),
    ssoDomainChecks: new Counter({
      name: 'gatehouse_sso_domain_checks_total',
      help: 'Periodic checks of SSO domains by DNS, by outcome: proven, failing (a proven domain starting its grace period), lost, other',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
