/**
 * Lambda `execute-copy-group`: execute-group's handler in the smaller function the state machine gives the groups the
 * plan expects binary copy to do (lib/clustering/executor.ts). The engine is sized from this function's memory.
 */
export { handler } from './execute-group.js';
