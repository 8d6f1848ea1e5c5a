/**
 * Cleaning, Hudi's way (HoodieCleanConfig policies, CleanPlanner rules, the Avro clean instants): a pure planner
 * (plan.ts), the shell that gathers its inputs and schedules the plan (schedule.ts), the executor (execute.ts) and
 * the commit (commit.ts), and runClean, which runs them in Hudi's order (clean.ts).
 */

export * from '../cleaner/clean-metadata.js';
export * from '../cleaner/config.js';
export * from '../cleaner/execute.js';
export * from '../cleaner/plan.js';
export * from './clean.js';
export * from './commit.js';
export * from './schedule.js';
export * from './shares.js';
export * from './show.js';
export { readCleanerPlan, readCleanMetadata, readLastClean, readSavepoints, type Savepoint } from './timeline-facts.js';
