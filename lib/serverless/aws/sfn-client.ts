/**
 * The Step Functions client, in a file of its own so that only the functions that start executions (the trigger,
 * the CLI's --via-state-machine) bundle the SFN SDK.
 */
import { SFNClient } from '@aws-sdk/client-sfn';
import { countRequests } from './clients.js';
import type { Environment } from './settings.js';

/** An SFN client from the environment (AWS_ENDPOINT_URL_SFN for a local endpoint), counting its requests. */
export function sfnClientFromEnv(env: Environment = process.env): SFNClient {
  const endpoint = env['AWS_ENDPOINT_URL_SFN']?.trim() || env['AWS_ENDPOINT_URL']?.trim() || undefined;
  const client = new SFNClient({
    region: env['AWS_REGION']?.trim() || env['AWS_DEFAULT_REGION']?.trim() || 'us-east-1',
    ...(endpoint === undefined ? {} : { endpoint }),
  });
  return countRequests(client, 'sfn');
}
