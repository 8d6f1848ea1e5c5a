/**
 * What a clustering run would cost on AWS, from what a run measured: each Lambda invocation's duration × its
 * configured memory, the AWS requests sent (S3 by pricing class, DynamoDB reads and writes), and Step Functions state
 * transitions. List prices below; free tiers are ignored.
 */

/** us-east-1 on-demand list prices, checked 2025-06-01. */
export const PRICES = Object.freeze({
  asOf: '2025-06-01',
  region: 'us-east-1',
  /** Lambda compute, per GB-second. */
  lambdaGbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
  /** Lambda, per request. */
  lambdaRequest: 0.2 / 1_000_000,
  /** Lambda ephemeral storage above the free 512 MB, per GB-second. */
  lambdaEphemeralGbSecond: 0.0000000309,
  /** S3 Standard PUT, COPY, POST, LIST requests. */
  s3Tier1Request: 0.005 / 1000,
  /** S3 Standard GET, SELECT and all other requests (HEAD). DELETE is free. */
  s3Tier2Request: 0.0004 / 1000,
  /** DynamoDB on-demand, per write / read request unit (the lock's items are < 1 KB). */
  dynamoDbWriteRequest: 0.625 / 1_000_000,
  dynamoDbReadRequest: 0.125 / 1_000_000,
  /** Step Functions Standard workflows, per state transition. */
  stateTransition: 0.025 / 1000,
});

/**
 * Amazon S3 Tables' managed compaction, us-east-1, from https://aws.amazon.com/s3/pricing/ (S3 Tables: "Compaction")
 * as issue 13 quotes them (2025): per 1,000 objects processed, and per GB processed by the binpack strategy and by
 * the sort and z-order strategies. Not re-checked against the live page in this session: the cost report
 * (bench/cost.ts) prints them beside ours.
 */
export const S3_TABLES_PRICES = Object.freeze({
  asOf: '2025 (issue 13)',
  region: 'us-east-1',
  per1000Objects: 0.002,
  binPackPerGb: 0.005,
  sortPerGb: 0.01,
});

export type Architecture = 'arm64' | 'x86_64';

export interface BilledInvocation {
  readonly memoryMb: number;
  readonly durationMs: number;
  /** Configured ephemeral storage (default 512 MB, the free amount). */
  readonly ephemeralStorageMb?: number;
}

export interface CostInputs {
  readonly architecture: Architecture;
  readonly invocations: readonly BilledInvocation[];
  /** Requests sent, by `service:Operation` (clients.ts counts them). */
  readonly requests: ReadonlyMap<string, number>;
  readonly stateTransitions: number;
}

export interface CostEstimate {
  readonly architecture: Architecture;
  readonly lambdaInvocations: number;
  readonly lambdaGbSeconds: number;
  readonly s3Tier1Requests: number;
  readonly s3Tier2Requests: number;
  readonly s3FreeRequests: number;
  readonly dynamoDbReads: number;
  readonly dynamoDbWrites: number;
  readonly stateTransitions: number;
  readonly dollars: {
    readonly lambda: number;
    readonly s3: number;
    readonly dynamoDb: number;
    readonly stepFunctions: number;
    readonly total: number;
  };
}

const S3_TIER1 = new Set([
  'PutObject',
  'CopyObject',
  'CreateMultipartUpload',
  'UploadPart',
  'UploadPartCopy',
  'CompleteMultipartUpload',
  'ListObjectsV2',
  'ListObjects',
  'ListObjectVersions',
  'ListMultipartUploads',
  'ListParts',
  'CreateBucket',
  'PutBucketNotificationConfiguration',
]);
const S3_FREE = new Set(['DeleteObject', 'DeleteObjects', 'AbortMultipartUpload']);
const DYNAMODB_READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem']);
const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

/** S3's pricing class of an operation. */
export function s3RequestClass(operation: string): 'tier1' | 'tier2' | 'free' {
  if (S3_TIER1.has(operation)) return 'tier1';
  if (S3_FREE.has(operation)) return 'free';
  return 'tier2';
}

export function estimateCost(inputs: CostInputs): CostEstimate {
  let gbSeconds = 0;
  let ephemeralGbSeconds = 0;
  for (const invocation of inputs.invocations) {
    // Lambda bills duration rounded up to the millisecond.
    const seconds = Math.ceil(invocation.durationMs) / 1000;
    gbSeconds += (invocation.memoryMb / 1024) * seconds;
    ephemeralGbSeconds += (Math.max(0, (invocation.ephemeralStorageMb ?? 512) - 512) / 1024) * seconds;
  }
  let tier1 = 0;
  let tier2 = 0;
  let free = 0;
  let reads = 0;
  let writes = 0;
  for (const [key, count] of inputs.requests) {
    const [service, operation = ''] = key.split(':');
    if (service === 's3') {
      const kind = s3RequestClass(operation);
      if (kind === 'tier1') tier1 += count;
      else if (kind === 'tier2') tier2 += count;
      else free += count;
    } else if (service === 'dynamodb') {
      if (DYNAMODB_READS.has(operation)) reads += count;
      else if (DYNAMODB_WRITES.has(operation)) writes += count;
    }
  }
  const lambda =
    gbSeconds * PRICES.lambdaGbSecond[inputs.architecture] +
    inputs.invocations.length * PRICES.lambdaRequest +
    ephemeralGbSeconds * PRICES.lambdaEphemeralGbSecond;
  const s3 = tier1 * PRICES.s3Tier1Request + tier2 * PRICES.s3Tier2Request;
  const dynamoDb = reads * PRICES.dynamoDbReadRequest + writes * PRICES.dynamoDbWriteRequest;
  const stepFunctions = inputs.stateTransitions * PRICES.stateTransition;
  return {
    architecture: inputs.architecture,
    lambdaInvocations: inputs.invocations.length,
    lambdaGbSeconds: gbSeconds,
    s3Tier1Requests: tier1,
    s3Tier2Requests: tier2,
    s3FreeRequests: free,
    dynamoDbReads: reads,
    dynamoDbWrites: writes,
    stateTransitions: inputs.stateTransitions,
    dollars: { lambda, s3, dynamoDb, stepFunctions, total: lambda + s3 + dynamoDb + stepFunctions },
  };
}

const usd = (amount: number): string => (amount >= 0.01 ? `$${amount.toFixed(4)}` : `$${amount.toFixed(6)}`);

export function formatCostEstimate(estimate: CostEstimate): string {
  const { dollars } = estimate;
  return (
    [
      `cost on AWS (${PRICES.region} list prices as of ${PRICES.asOf}, ${estimate.architecture}, free tiers ignored):`,
      `  Lambda         ${estimate.lambdaInvocations} invocations, ${estimate.lambdaGbSeconds.toFixed(2)} GB-s     ${usd(dollars.lambda)}`,
      `  S3 requests    ${estimate.s3Tier1Requests} PUT/LIST, ${estimate.s3Tier2Requests} GET/HEAD, ${estimate.s3FreeRequests} DELETE (free)     ${usd(dollars.s3)}`,
      `  DynamoDB lock  ${estimate.dynamoDbReads} reads, ${estimate.dynamoDbWrites} writes     ${usd(dollars.dynamoDb)}`,
      `  Step Functions ${estimate.stateTransitions} state transitions     ${usd(dollars.stepFunctions)}`,
      `  total          ${usd(dollars.total)} per run`,
    ].join('\n') + '\n'
  );
}
