/**
 * A local stand-in for Step Functions' Distributed Map: aws-local-stepfunctions 3.0 runs every Map inline, ignoring
 * ItemReader, ProcessorConfig, ToleratedFailurePercentage and ResultWriter. So before a run, each DISTRIBUTED Map X with
 * an S3 ItemReader becomes a Parallel (X's Catch and Next, ResultPath null) of "X: read items" (GetObject of the items)
 * and "X: items" (X as an inline Map over them), so a failed read or item reaches the same next state as in Step
 * Functions (ToleratedFailurePercentage 0, the only tolerance supported). Not reproduced: child executions (items run as
 * inline iterations, their events count in this run), ResultWriter and item batching (both refused).
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { StateMachineDefinition } from 'aws-local-stepfunctions';
import { HudiError } from '../../errors.js';
import { s3ClientFromEnv } from '../../storage/s3.js';
import type { JsonValue } from './lambda.js';

export const S3_GET_OBJECT = 'arn:aws:states:::s3:getObject';
const ITEMS_PATH = '$.localDistributedMapItems';

type StateRecord = Record<string, unknown>;

/** The definition with its Distributed Maps rewritten, and the names of the Task states that read their items. */
export function inlineDistributedMaps(definition: StateMachineDefinition): {
  readonly definition: StateMachineDefinition;
  readonly itemReaders: readonly string[];
} {
  const copy = structuredClone(definition) as unknown as { States: Record<string, StateRecord> };
  const itemReaders: string[] = [];
  const rewrite = (states: Record<string, StateRecord>): void => {
    for (const [name, state] of Object.entries(states)) {
      const processor = state['ItemProcessor'] as { ProcessorConfig?: { Mode?: string }; States?: Record<string, StateRecord> } | undefined;
      if (processor?.States !== undefined) rewrite(processor.States);
      for (const branch of (state['Branches'] as { States: Record<string, StateRecord> }[] | undefined) ?? []) rewrite(branch.States);
      if (state['Type'] !== 'Map' || processor?.ProcessorConfig?.Mode !== 'DISTRIBUTED') continue;
      states[name] = standIn(name, state, itemReaders);
    }
  };
  rewrite(copy.States);
  return { definition: copy as unknown as StateMachineDefinition, itemReaders };
}

function standIn(name: string, state: StateRecord, itemReaders: string[]): StateRecord {
  const refuse = (what: string): never => {
    throw new HudiError(`the local runner cannot run Distributed Map ${name}: ${what}`, {
      location: name,
      fix: 'use an S3 ItemReader with ReaderConfig.InputType JSON, no ResultWriter and no ItemBatcher',
    });
  };
  const reader = state['ItemReader'] as { Resource?: string; ReaderConfig?: { InputType?: string }; Parameters?: unknown } | undefined;
  if (reader === undefined) refuse('it has no ItemReader');
  if (reader!.Resource !== S3_GET_OBJECT || reader!.ReaderConfig?.InputType !== 'JSON')
    refuse(`ItemReader ${reader!.Resource ?? ''} with ${reader!.ReaderConfig?.InputType ?? 'no'} input type`);
  if (state['ResultWriter'] !== undefined) refuse('ResultWriter');
  if (state['ItemBatcher'] !== undefined) refuse('ItemBatcher');
  const tolerated = state['ToleratedFailurePercentage'] ?? 0;
  if (tolerated !== 0 || state['ToleratedFailureCount'] !== undefined) refuse('a failure tolerance other than ToleratedFailurePercentage 0');
  const readName = `${name}: read items`;
  const mapName = `${name}: items`;
  itemReaders.push(readName);
  const { ItemReader: _reader, ToleratedFailurePercentage: _tolerated, Label: _label, Catch, Next, End, ResultPath: _resultPath, ...map } = state;
  const processor = map['ItemProcessor'] as StateRecord;
  const parallel: StateRecord = {
    Type: 'Parallel',
    Comment: `local stand-in for the Distributed Map ${name} (lib/serverless/local/distributed-map.ts)`,
    Branches: [
      {
        StartAt: readName,
        States: {
          [readName]: { Type: 'Task', Resource: S3_GET_OBJECT, Parameters: reader!.Parameters, ResultPath: ITEMS_PATH, Next: mapName },
          [mapName]: { ...map, ItemsPath: ITEMS_PATH, ItemProcessor: { ...processor, ProcessorConfig: { Mode: 'INLINE' } }, ResultPath: null, End: true },
        },
      },
    ],
    ResultPath: null,
    ...(Catch === undefined ? {} : { Catch }),
    ...(Next === undefined ? {} : { Next }),
    ...(End === undefined ? {} : { End }),
  };
  return parallel;
}

/** The ItemReader's read: the S3 object `{Bucket, Key}` names, a JSON array, read with the SDK's endpoint from the environment. */
export async function readItems(input: JsonValue): Promise<JsonValue> {
  const params = typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
  const bucket = params['Bucket'];
  const key = params['Key'];
  if (typeof bucket !== 'string' || typeof key !== 'string')
    throw new HudiError('the ItemReader needs Bucket and Key strings', { location: JSON.stringify(input) });
  const response = await s3ClientFromEnv().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const text = (await response.Body?.transformToString('utf8')) ?? '';
  const items = JSON.parse(text) as JsonValue;
  // Step Functions' message for a manifest that is not a JSON array.
  if (!Array.isArray(items)) throw Object.assign(new Error(`s3://${bucket}/${key} is not a JSON array`), { name: 'States.ItemReaderFailed' });
  return items;
}
