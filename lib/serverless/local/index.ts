/**
 * Local stand-ins for AWS, for `npm start`, the tests and `cluster --via-state-machine local`; nothing deployed
 * imports them: the state machine run in-process (state-machine.ts) over emulated Lambda invocations (lambda.ts),
 * its progress (progress.ts), a local Step Functions endpoint (sfn-endpoint.ts), and SQS as an event source (sqs.ts).
 */

export { inlineDistributedMaps } from './distributed-map.js';
export { asInvocation, type FunctionName, type InvocationRecord, type LambdaHandler, lambdaContext, loadBundledHandler } from './lambda.js';
export { formatProgressEvent, type ProgressEvent } from './progress.js';
export { type LocalExecutionState, type LocalStateMachine, type LocalStepFunctions, startLocalStepFunctionsEndpoint } from './sfn-endpoint.js';
export { LocalQueue, type QueueMessage, s3PutEvent } from './sqs.js';
export {
  FUNCTION_SUBSTITUTIONS,
  type LocalExecution,
  type LocalRunOptions,
  loadDefinition,
  runStateMachineLocally,
  taskFunctions,
} from './state-machine.js';
export { clusterViaLocalStateMachine, type LocalViaStateMachineOptions, type LocalViaStateMachineResult } from './via-state-machine.js';
