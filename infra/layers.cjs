/**
 * The layers of lib/, bottom to top: a room imports its own layer (without a folder cycle) and the layers below,
 * never one above. Read by .dependency-cruiser.cjs (the check in `npm run lint`) and by test/repository/readme.test.ts (the
 * README's "What is where" lists the same layers in the same order).
 */
module.exports.LAYERS = [
  { name: 'foundation', rooms: ['errors.ts', 'config', 'util'] },
  { name: 'codecs and storage', rooms: ['storage', 'parquet', 'log-format', 'hfile', 'base-file', 'layout', 'lock'] },
  { name: 'timeline', rooms: ['timeline'] },
  { name: 'table', rooms: ['table'] },
  { name: 'engine', rooms: ['engine'] },
  { name: 'reading', rooms: ['merge-on-read', 'read'] },
  { name: 'cleaner', rooms: ['cleaner'] },
  { name: 'archiver', rooms: ['archiver'] },
  { name: 'metadata table', rooms: ['metadata'] },
  { name: 'services', rooms: ['writer', 'rollback', 'compaction', 'clustering', 'cleaning', 'archival', 'ingest', 'sync', 'status'] },
  { name: 'serverless: AWS plumbing', rooms: ['serverless/aws'] },
  { name: 'serverless: steps', rooms: ['serverless/steps'] },
  { name: 'serverless: executions and local stand-ins', rooms: ['serverless/executions', 'serverless/local'] },
  { name: 'entry points', rooms: ['serverless/index.ts', 'index.ts', 'cli', 'docs'] },
];
