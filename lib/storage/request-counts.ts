/**
 * Requests a storage adapter sent, by kind: what S3 bills per request (GET and HEAD at one price; PUT, LIST and the
 * multipart calls at another; DELETE free). Counted in the adapter, once per request it sends (the SDK's own retries
 * of a request are not seen here; the serverless clients' middleware counts those, lib/serverless/aws/clients.ts).
 */
export const STORAGE_REQUEST_KINDS = [
  'get',
  'head',
  'put',
  'list',
  'delete',
  'multipartCreate',
  'multipartPart',
  'multipartComplete',
  'multipartAbort',
] as const;

export type StorageRequestKind = (typeof STORAGE_REQUEST_KINDS)[number];

/** Counts by kind; kinds never sent are absent. */
export type RequestCounts = Readonly<Partial<Record<StorageRequestKind, number>>>;

/** A tally that one or more storages add to (a run's, a group's). */
export class RequestCounter {
  private readonly counts = new Map<StorageRequestKind, number>();

  add(kind: StorageRequestKind, count = 1): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + count);
  }

  snapshot(): RequestCounts {
    const out: Partial<Record<StorageRequestKind, number>> = {};
    for (const kind of STORAGE_REQUEST_KINDS) {
      const count = this.counts.get(kind);
      if (count !== undefined && count > 0) out[kind] = count;
    }
    return out;
  }
}

export function sumRequestCounts(all: readonly (RequestCounts | undefined)[]): RequestCounts {
  const total = new RequestCounter();
  for (const counts of all) for (const kind of STORAGE_REQUEST_KINDS) if (counts?.[kind] !== undefined) total.add(kind, counts[kind]);
  return total.snapshot();
}

export function totalRequests(counts: RequestCounts): number {
  return STORAGE_REQUEST_KINDS.reduce((sum, kind) => sum + (counts[kind] ?? 0), 0);
}

/** `12 GET, 3 PUT, 2 multipart (1 upload, 8 parts)`-style text; "none" when nothing was sent. */
export function formatRequestCounts(counts: RequestCounts): string {
  const parts: string[] = [];
  const simple: [StorageRequestKind, string][] = [
    ['get', 'GET'],
    ['head', 'HEAD'],
    ['put', 'PUT'],
    ['list', 'LIST'],
    ['delete', 'DELETE'],
  ];
  for (const [kind, label] of simple) if (counts[kind] !== undefined) parts.push(`${counts[kind]} ${label}`);
  if (counts.multipartCreate !== undefined || counts.multipartPart !== undefined) {
    const aborted = counts.multipartAbort === undefined ? '' : `, ${counts.multipartAbort} aborted`;
    parts.push(`${counts.multipartCreate ?? 0} multipart upload(s) of ${counts.multipartPart ?? 0} part(s)${aborted}`);
  }
  return parts.length === 0 ? 'none' : parts.join(', ');
}
