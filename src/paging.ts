// Pages of a list: one check, one wording, for every list an interface offers (clients, users,
// tenants, the console's tenant picker). Each refusal names the argument as its interface names
// it (`perPage`, `maxResults`, `pageNum`…).
import { badInput } from './errors.js';

/** what a page holds when the caller does not say, and at most (clients, users) */
export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 500;
/** the deepest a page may start: an offset the database must walk past costs what reading it does */
export const MAX_OFFSET = 1_000_000;

export interface PagingRules {
  /** the names of the arguments in the interface (default `page`, `perPage`) */
  names?: { page: string; perPage: string };
  defaultPerPage?: number;
  maxPerPage?: number;
  /** how to reach deeper than MAX_OFFSET, if the list has a way (e.g. a cursor argument) */
  deeper?: string;
}

export interface Page {
  page: number;
  perPage: number;
  /** rows before the page */
  offset: number;
}

/** The page asked for, checked: `page` from 1, `perPage` from 1 to the maximum, not too deep. */
export function checkPage(input: { page?: number | null; perPage?: number | null }, rules: PagingRules = {}): Page {
  const names = rules.names ?? { page: 'page', perPage: 'perPage' };
  const max = rules.maxPerPage ?? MAX_PER_PAGE;
  const page = input.page ?? 1;
  const perPage = input.perPage ?? rules.defaultPerPage ?? DEFAULT_PER_PAGE;
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > max) {
    throw badInput(`${names.perPage} must be from 1 to ${max}`, { field: names.perPage });
  }
  if (!Number.isInteger(page) || page < 1) throw badInput(`${names.page} must be 1 or more (pages are numbered from 1)`, { field: names.page });
  const offset = (page - 1) * perPage;
  if (offset > MAX_OFFSET) {
    throw badInput(
      `${names.page} is too deep: a page starts at most ${MAX_OFFSET.toLocaleString('en')} rows in${rules.deeper ? `; ${rules.deeper}` : ''}`,
      { field: names.page },
    );
  }
  return { page, perPage, offset };
}
