/**
 * Serverless clustering: the Lambda steps (functions/*.ts are thin shells over these), the trigger, the local
 * state-machine runner and `cluster --via-state-machine`. See README.md.
 */
export { clusterViaStateMachine, type ViaStateMachineOptions, type ViaStateMachineResult } from './via-state-machine.js';
export {
  runStateMachineLocally,
  loadBundledHandler,
  loadDefinition,
  lambdaContext,
  formatProgressEvent,
  DEFAULT_MEMORY_MB,
  type FaultContext,
  type FaultHook,
  type FunctionName,
  type InvocationRecord,
  type LocalExecution,
  type LocalRunOptions,
  type ProgressEvent,
} from './local-state-machine.js';
export { startLocalStepFunctionsEndpoint, type LocalStepFunctions } from './local-sfn-endpoint.js';
export { FUNCTIONS, type DeployedFunction, type FunctionSettings } from './function-settings.js';
export { estimateCost, formatCostEstimate, PRICES, type CostEstimate, type CostInputs } from './cost.js';
export { planStep, parsePlanEvent, type PlanStepInput, type PlanStepOutput, type GroupReference } from './plan-step.js';
export { executeGroupStep, parseExecuteGroupEvent, type ExecuteGroupInput, type ExecuteGroupOutput } from './execute-step.js';
export { commitStep, parseCommitEvent, type CommitStepInput, type CommitStepOutput, type ReportSummary } from './commit-step.js';
export { rollbackStep, parseRollbackEvent, type RollbackStepInput, type RollbackStepOutput } from './rollback-step.js';
export {
  triggerStep,
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
export { resolveStepSettings, ENV, type ClusteringExecutionInput, type PropertyOverrides, type StepSettings } from './settings.js';
export { TASK_ERROR_NAMES, TRANSIENT_ERROR, CONFLICT_ERROR, INCOMPLETE_ERROR, PERMANENT_ERROR, taskErrorName } from './errors.js';
