/**
 * Local stand-ins for AWS, for `npm start`, the tests and `cluster --via-state-machine local`; nothing deployed
 * imports them: the state machine run in-process (state-machine.ts) over emulated Lambda invocations (lambda.ts),
 * its progress (progress.ts), and a local Step Functions endpoint (sfn-endpoint.ts).
 */

export { inlineDistributedMaps } from './distributed-map.js';
export { type FunctionName, type InvocationRecord, type LambdaHandler, lambdaContext, loadBundledHandler } from './lambda.js';
export { formatProgressEvent, type ProgressEvent } from './progress.js';
export { type LocalStepFunctions, startLocalStepFunctionsEndpoint } from './sfn-endpoint.js';
export {
  FUNCTION_SUBSTITUTIONS,
  type LocalExecution,
  type LocalRunOptions,
  loadDefinition,
  runStateMachineLocally,
  taskFunctions,
} from './state-machine.js';
export { clusterViaLocalStateMachine, type LocalViaStateMachineOptions, type LocalViaStateMachineResult } from './via-state-machine.js';
