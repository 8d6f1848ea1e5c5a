/**
 * The deployed functions' memory, timeout and /tmp, as template.yaml gives them (with its parameters' defaults).
 * A template cannot read them from a file of the repository (AWS::Include only takes a snippet already in S3, and
 * cfn-lint cannot follow it), so template.yaml states them too and test/serverless/infra.test.ts holds it to this one
 * source; the local state-machine runner emulates and bills these.
 */
export interface FunctionSettings {
  /** The template's logical id. */
  readonly resource: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  /** /tmp: the template's EphemeralStorage, Lambda's 512 MB when it sets none. */
  readonly ephemeralStorageMb: number;
}

export const FUNCTIONS = {
  plan: { resource: 'PlanFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  // ExecuteGroupMemoryMb and ExecuteGroupEphemeralStorageMb are parameters: these are their defaults.
  'execute-group': { resource: 'ExecuteGroupFunction', memoryMb: 2048, timeoutSeconds: 900, ephemeralStorageMb: 4096 },
  // The groups the plan expects binary copy to do (ExecuteCopyGroupMemoryMb); /tmp as execute-group's.
  'execute-copy-group': { resource: 'ExecuteCopyGroupFunction', memoryMb: 1024, timeoutSeconds: 900, ephemeralStorageMb: 4096 },
  commit: { resource: 'CommitFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  rollback: { resource: 'RollbackFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  'clean-prepare': { resource: 'CleanPrepareFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  'clean-plan': { resource: 'CleanPlanFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  'clean-schedule': { resource: 'CleanScheduleFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  'clean-execute': { resource: 'CleanExecuteFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  'clean-complete': { resource: 'CleanCompleteFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  archive: { resource: 'ArchiveFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  'compaction-schedule': { resource: 'CompactionScheduleFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  // Sized as execute-group, by the same parameters.
  'compaction-execute': { resource: 'CompactionExecuteFunction', memoryMb: 2048, timeoutSeconds: 900, ephemeralStorageMb: 4096 },
  'compaction-commit': { resource: 'CompactionCommitFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  'compaction-rollback': { resource: 'CompactionRollbackFunction', memoryMb: 1024, timeoutSeconds: 300, ephemeralStorageMb: 512 },
  // Reads the table's files (the record index check reads every record key through /tmp).
  doctor: { resource: 'DoctorFunction', memoryMb: 2048, timeoutSeconds: 900, ephemeralStorageMb: 2048 },
  trigger: { resource: 'TriggerFunction', memoryMb: 256, timeoutSeconds: 60, ephemeralStorageMb: 512 },
  ingest: { resource: 'IngestFunction', memoryMb: 2048, timeoutSeconds: 900, ephemeralStorageMb: 2048 },
} as const satisfies Readonly<Record<string, FunctionSettings>>;

export type DeployedFunction = keyof typeof FUNCTIONS;
