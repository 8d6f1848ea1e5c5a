/**
 * The clean as state machine steps (functions/clean-*.ts are their shells), Hudi's cleaner fanned out over Lambdas:
 * prepare → plan a share (Map) → schedule → execute a share (Map) → complete. The state carries share numbers only;
 * partitions, plans and results stay in the work folder (cleaning/shares.ts), so no Lambda holds the whole table
 * and no state nears Step Functions' 256 KB. A clean is never rolled back (Hudi does not): a failed run leaves it
 * pending and the next run finishes it from its plan.
 */
export { type CleanCompleteInput, cleanCompleteStep, parseCleanCompleteEvent } from './complete.js';
export { type CleanExecuteShareInput, cleanExecuteShareStep, parseCleanExecuteShareEvent } from './execute-share.js';
export { type CleanPlanShareInput, cleanPlanShareStep, parseCleanPlanShareEvent } from './plan-share.js';
export { cleanPrepareStep, parseCleanPrepareEvent } from './prepare.js';
export { type CleanScheduleInput, cleanScheduleStep, parseCleanScheduleEvent } from './schedule.js';
export type { CleanShareOutput, CleanStepOutput, ShareReference, TableServiceBase, TableServiceInput } from './shared.js';
