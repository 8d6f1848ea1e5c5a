/**
 * CloudWatch metrics in embedded metric format as the bundled handlers print them (Powertools): the EMF documents
 * a piece of work writes on stdout, the other lines it writes (the structured log), and a metric's value in one.
 */
import assert from 'node:assert/strict';

export interface EmfRecord {
  readonly _aws: {
    readonly Timestamp: number;
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string;
      readonly Dimensions: readonly (readonly string[])[];
      readonly Metrics: readonly { readonly Name: string; readonly Unit: string }[];
    }[];
  };
  readonly [key: string]: unknown;
}

/**
 * Every EMF document printed on stdout while `work` runs (other output passes through); with `logLines`, the other
 * lines of stdout and stderr too (kept back instead of passed through).
 */
export async function capturingEmf<T>(work: () => Promise<T>, options: { logLines?: string[] } = {}): Promise<{ result: T; records: EmfRecord[] }> {
  const records: EmfRecord[] = [];
  const capture = (stream: NodeJS.WriteStream, emf: boolean) => {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const kept: string[] = [];
      for (const line of text.split('\n')) {
        if (emf && line.startsWith('{') && line.includes('"_aws"')) records.push(JSON.parse(line) as EmfRecord);
        else if (options.logLines !== undefined && line !== '') options.logLines.push(line);
        else kept.push(line);
      }
      const rest_ = kept.join('\n');
      return rest_ === '' ? true : (write as (c: string, ...r: unknown[]) => boolean)(rest_, ...rest);
    }) as typeof stream.write;
    return () => {
      stream.write = write;
    };
  };
  const restore = [capture(process.stdout, true), ...(options.logLines === undefined ? [] : [capture(process.stderr, false)])];
  try {
    return { result: await work(), records };
  } finally {
    for (const undo of restore) undo();
  }
}

export function recordsOf(records: readonly EmfRecord[], step: string): EmfRecord[] {
  return records.filter((record) => record['step'] === step);
}

/** A metric's value in a record, checking the record declares it with `unit`. */
export function metric(record: EmfRecord, name: string, unit?: string): number {
  const declared = record._aws.CloudWatchMetrics.flatMap((directive) => directive.Metrics).find((m) => m.Name === name);
  assert.ok(declared !== undefined, `${name} is declared in ${JSON.stringify(record._aws)}`);
  if (unit !== undefined) assert.equal(declared.Unit, unit, `${name}'s unit`);
  const value = record[name];
  assert.equal(typeof value, 'number', `${name} has a value`);
  return value as number;
}
