/** An entity tag as events and responses give it (`"…"`, sometimes weak `W/"…"`), without the quotes and the W/. */
export function normalizeEtag(etag: string): string {
  return etag
    .trim()
    .replace(/^W\//, '')
    .replace(/^"+|"+$/g, '');
}
