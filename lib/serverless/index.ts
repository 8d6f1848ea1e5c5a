/**
 * Serverless Hudi: the Lambda steps of clustering, cleaning and archiving (functions/*.ts are thin shells over
 * these), the trigger, `cluster --via-state-machine <ARN>` and the deployed functions' settings. See README.md. The local stand-ins (the state
 * machine run in-process, Lambda emulation, a local Step Functions endpoint) are ./local/, imported on their own.
 */
export {
  clusterViaStateMachine,
  clusteringExecutionInput,
  type ViaStateMachineOptions,
  type ViaStateMachineResult,
  type ViaStateMachineRun,
} from './via-state-machine.js';
export { FUNCTIONS, type DeployedFunction, type FunctionSettings } from './function-settings.js';
export { estimateCost, formatCostEstimate, PRICES, type CostEstimate, type CostInputs } from './cost.js';
export { planStep, parsePlanEvent, type PlanStepInput, type PlanStepOutput, type GroupReference } from './plan-step.js';
export { executeGroupStep, parseExecuteGroupEvent, type ExecuteGroupInput, type ExecuteGroupOutput } from './execute-step.js';
export { commitStep, parseCommitEvent, type CommitStepInput, type CommitStepOutput, type ReportSummary } from './commit-step.js';
export { rollbackStep, parseRollbackEvent, type RollbackStepInput, type RollbackStepOutput } from './rollback-step.js';
export {
  cleanPrepareStep,
  cleanPlanShareStep,
  cleanScheduleStep,
  cleanExecuteShareStep,
  cleanCompleteStep,
  parseCleanPrepareEvent,
  parseCleanPlanShareEvent,
  parseCleanScheduleEvent,
  parseCleanExecuteShareEvent,
  parseCleanCompleteEvent,
  type CleanStepOutput,
  type CleanShareOutput,
  type ShareReference,
  type TableServiceBase,
} from './clean-steps.js';
export { archiveStep, parseArchiveEvent, type ArchiveStepOutput } from './archive-step.js';
export { describeTableServices, type TableServicesOutput } from './run-output.js';
export {
  triggerStep,
  tableServicesDue,
  parseTriggerEvent,
  executionNameFor,
  StepFunctionsStarter,
  sfnClientFromEnv,
  type ExecutionStarter,
  type StartRequest,
  type StartOutcome,
  type TriggerOutput,
  type TriggerSource,
} from './trigger.js';
export {
  ingestStep,
  parseIngestEvent,
  ingestConfigFromEnv,
  createIngestObservability,
  decodeS3EventKey,
  type IngestConfig,
  type IngestEvent,
  type IngestInput,
  type IngestSummary,
  type ObjectSummary,
} from './ingest-step.js';
export {
  resolveStepSettings,
  tableServiceProperties,
  ENV,
  RUN_SERVICES,
  type ClusteringExecutionInput,
  type PropertyOverrides,
  type RunServices,
  type StepSettings,
} from './settings.js';
export {
  EventPropertyError,
  eventPropertyPolicy,
  assertEventProperties,
  isDeploymentOnlyKey,
  DEFAULT_EVENT_PROPERTIES,
  UNSAFE_CLUSTERING_KEYS,
  EVENT_ALLOWED_PROPERTIES,
  type EventPropertyPolicy,
} from './event-properties.js';
export { TASK_ERROR_NAMES, TRANSIENT_ERROR, CONFLICT_ERROR, INCOMPLETE_ERROR, PERMANENT_ERROR, taskErrorName } from './errors.js';
