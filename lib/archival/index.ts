/**
 * Archival, Hudi's way: the rules (plan.ts), the HoodieArchivedMetaEntry records (archived-meta-entry.ts), the
 * archived timeline's log files (archived-timeline.ts) and the service that moves instants there (archive.ts).
 */
export * from './config.js';
export * from './plan.js';
export * from './archived-meta-entry.js';
export * from './archived-timeline.js';
export * from './archive.js';
export * from './history.js';
