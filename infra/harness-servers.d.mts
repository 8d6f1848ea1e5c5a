// Types of infra/harness-servers.mjs for test/helpers/hudi.ts.
export declare function isSlotServer(base: string, pid: number): boolean;
export declare function slotServerPid(base: string): number;
export declare function processAlive(pid: number): boolean;
export declare function readPid(file: string): number;
