/**
 * Archival, Hudi's way: the rules (lib/archiver/plan.ts), the HoodieArchivedMetaEntry records (archived-meta-entry.ts),
 * the archived timeline's log files (archived-timeline.ts) and the service that moves instants there (archive.ts); on
 * Hudi 1.x tables the rules of lib/archiver/plan-lsm.ts and the LSM timeline history (archive-lsm.ts).
 */

export * from '../archiver/plan.js';
export * from '../archiver/plan-lsm.js';
export * from '../timeline/archived/archived-timeline.js';
export * from '../timeline/archived/history.js';
export * from '../timeline/archived/meta-entry.js';
export * from './archive.js';
export * from './archive-lsm.js';
export * from './config.js';
