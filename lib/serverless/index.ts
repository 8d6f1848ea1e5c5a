/**
 * Serverless Hudi: the Lambda steps of clustering, cleaning and archiving (functions/*.ts are thin shells over
 * these), the trigger, `cluster --via-state-machine <ARN>` and the deployed functions' settings. See README.md. The local stand-ins (the state
 * machine run in-process, Lambda emulation, a local Step Functions endpoint) are ./local/, imported on their own.
 */

export { type CostEstimate, type CostInputs, estimateCost, formatCostEstimate, PRICES } from './aws/cost.js';
export { CONFLICT_ERROR, INCOMPLETE_ERROR, PERMANENT_ERROR, TASK_ERROR_NAMES, TRANSIENT_ERROR, taskErrorName } from './aws/errors.js';
export {
  assertEventProperties,
  DEFAULT_EVENT_PROPERTIES,
  EVENT_ALLOWED_PROPERTIES,
  EventPropertyError,
  type EventPropertyPolicy,
  eventPropertyPolicy,
  isDeploymentOnlyKey,
  UNSAFE_CLUSTERING_KEYS,
} from './aws/event-properties.js';
export { type DeployedFunction, FUNCTIONS, type FunctionSettings } from './aws/function-settings.js';
export {
  type ClusteringExecutionInput,
  ENV,
  type PropertyOverrides,
  RUN_SERVICES,
  type RunServices,
  resolveStepSettings,
  type StepSettings,
  tableServiceProperties,
} from './aws/settings.js';
export { sfnClientFromEnv } from './aws/sfn-client.js';
export { describeTableServices, type TableServicesOutput } from './executions/run-output.js';
export {
  clusteringExecutionInput,
  clusterViaStateMachine,
  type ViaStateMachineOptions,
  type ViaStateMachineResult,
  type ViaStateMachineRun,
} from './executions/via-state-machine.js';
export { type ArchiveStepOutput, archiveStep, parseArchiveEvent } from './steps/archival/archive.js';
export {
  type CleanShareOutput,
  type CleanStepOutput,
  cleanCompleteStep,
  cleanExecuteShareStep,
  cleanPlanShareStep,
  cleanPrepareStep,
  cleanScheduleStep,
  parseCleanCompleteEvent,
  parseCleanExecuteShareEvent,
  parseCleanPlanShareEvent,
  parseCleanPrepareEvent,
  parseCleanScheduleEvent,
  type ShareReference,
  type TableServiceBase,
} from './steps/cleaning/index.js';
export { type CommitStepInput, type CommitStepOutput, commitStep, parseCommitEvent, type ReportSummary } from './steps/clustering/commit.js';
export { type ExecuteGroupInput, type ExecuteGroupOutput, executeGroupStep, parseExecuteGroupEvent } from './steps/clustering/execute.js';
export { type GroupReference, type PlanStepOutput, parsePlanEvent, planStep } from './steps/clustering/plan.js';
export { parseRollbackEvent, type RollbackStepInput, type RollbackStepOutput, rollbackStep } from './steps/clustering/rollback.js';
export type { PlanStepInput, StepDependencies } from './steps/contract.js';
export {
  createIngestObservability,
  decodeS3EventKey,
  type IngestConfig,
  type IngestEvent,
  type IngestInput,
  type IngestSummary,
  ingestConfigFromEnv,
  ingestStep,
  type ObjectSummary,
  parseIngestEvent,
} from './steps/ingest/ingest.js';
export {
  type ExecutionStarter,
  executionNameFor,
  parseTriggerEvent,
  type StartOutcome,
  type StartRequest,
  StepFunctionsStarter,
  type TriggerOutput,
  type TriggerSource,
  tableServicesDue,
  triggerStep,
} from './steps/trigger/trigger.js';
