/**
 * S3 notifications through SQS, on this machine: the calls an SQS event source mapping makes on a queue (moto's SQS at
 * AWS_ENDPOINT_URL_SQS, in SQS's JSON protocol), the event a Lambda receives for a batch of messages, and the
 * notification S3 sends for a PutObject. For the stream demo, the ingest bench and the tests; nothing deployed
 * imports them.
 */
import type { S3Event, SQSEvent } from 'aws-lambda';
import { HudiError } from '../../errors.js';
import { normalizeEtag } from '../../storage/etag.js';

export interface QueueMessage {
  readonly MessageId: string;
  readonly ReceiptHandle: string;
  readonly Body: string;
  /** The system attributes asked for: ApproximateReceiveCount. */
  readonly Attributes?: Readonly<Record<string, string>>;
}

/** One queue: create it, send, receive, delete, and the Lambda event of a batch. */
export class LocalQueue {
  private constructor(
    private readonly endpoint: string,
    readonly name: string,
    readonly url: string,
  ) {}

  /** A queue (created, or the existing one of that name) whose messages stay hidden while a batch is handled. */
  static async create(name: string, endpoint: string | undefined = process.env['AWS_ENDPOINT_URL_SQS']): Promise<LocalQueue> {
    if (endpoint === undefined || endpoint.trim() === '')
      throw new HudiError('AWS_ENDPOINT_URL_SQS is not set', { fix: 'run under infra/with-local-stack.mjs, which starts an SQS (moto) and sets it' });
    const created = await call<{ QueueUrl: string }>(endpoint, 'CreateQueue', { QueueName: name, Attributes: { VisibilityTimeout: '5400' } });
    return new LocalQueue(endpoint, name, created.QueueUrl);
  }

  get arn(): string {
    return `arn:aws:sqs:us-east-1:123456789012:${this.name}`;
  }

  async send(body: string): Promise<void> {
    await call(this.endpoint, 'SendMessage', { QueueUrl: this.url, MessageBody: body });
  }

  /** Several messages, ten per request (SendMessageBatch); a message SQS refuses is an error. */
  async sendAll(bodies: readonly string[]): Promise<void> {
    for (let i = 0; i < bodies.length; i += 10) {
      const entries = bodies.slice(i, i + 10).map((body, j) => ({ Id: String(j), MessageBody: body }));
      const sent = await call<{ Failed?: { Id: string; Message?: string }[] }>(this.endpoint, 'SendMessageBatch', { QueueUrl: this.url, Entries: entries });
      if ((sent.Failed ?? []).length > 0) {
        throw new HudiError(`SQS refused ${sent.Failed!.length} of ${entries.length} messages: ${sent.Failed![0]!.Message ?? 'no reason given'}`, {
          fix: 'check the local SQS server (moto) log',
        });
      }
    }
  }

  /** Up to `max` (at most 10) visible messages, without waiting for more. */
  async receive(max = 10): Promise<QueueMessage[]> {
    const received = await call<{ Messages?: QueueMessage[] }>(this.endpoint, 'ReceiveMessage', {
      QueueUrl: this.url,
      MaxNumberOfMessages: Math.min(10, max),
      WaitTimeSeconds: 0,
      // The event's ApproximateReceiveCount: the ingest function reads it (a first delivery skips a read).
      AttributeNames: ['ApproximateReceiveCount'],
    });
    return received.Messages ?? [];
  }

  /**
   * The next batch the event source mapping hands the function: messages until `batchSize`, or until the queue has no
   * visible message left (a batching window that closes when the queue is drained, not on a timer).
   */
  async nextBatch(batchSize: number): Promise<QueueMessage[]> {
    const batch: QueueMessage[] = [];
    while (batch.length < batchSize) {
      const messages = await this.receive(batchSize - batch.length);
      if (messages.length === 0) break;
      batch.push(...messages);
    }
    return batch;
  }

  /** Delete handled messages, ten per request. */
  async delete(messages: readonly QueueMessage[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      const entries = messages.slice(i, i + 10).map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle }));
      await call(this.endpoint, 'DeleteMessageBatch', { QueueUrl: this.url, Entries: entries });
    }
  }

  /** The event Lambda receives for `messages`. */
  eventOf(messages: readonly QueueMessage[]): SQSEvent {
    return {
      Records: messages.map((m) => ({
        messageId: m.MessageId,
        receiptHandle: m.ReceiptHandle,
        body: m.Body,
        attributes: {
          ApproximateReceiveCount: m.Attributes?.['ApproximateReceiveCount'] ?? '1',
          SentTimestamp: '0',
          SenderId: 'local',
          ApproximateFirstReceiveTimestamp: '0',
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: this.arn,
        awsRegion: 'us-east-1',
      })),
    };
  }
}

async function call<T>(endpoint: string, action: string, body: object): Promise<T> {
  const response = await fetch(`${endpoint.replace(/\/+$/, '')}/`, {
    method: 'POST',
    headers: {
      'X-Amz-Target': `AmazonSQS.${action}`,
      'Content-Type': 'application/x-amz-json-1.0',
      // moto reads the service from the credential scope; it checks no signature.
      Authorization: 'AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new HudiError(`SQS ${action} answered ${response.status}: ${text}`, { location: endpoint });
  return (text === '' ? {} : JSON.parse(text)) as T;
}

/** What S3 sends for a PutObject: the key URL-encoded, spaces as '+'. */
export function s3PutEvent(bucket: string, key: string, etag: string, size: number): S3Event {
  const encodedKey = encodeURIComponent(key).replace(/%2F/g, '/').replace(/%20/g, '+');
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'us-east-1',
        eventTime: new Date().toISOString(),
        eventName: 'ObjectCreated:Put',
        userIdentity: { principalId: 'AWS:AIDAEXAMPLE' },
        requestParameters: { sourceIPAddress: '127.0.0.1' },
        responseElements: { 'x-amz-request-id': 'C3D13FE58DE4C810', 'x-amz-id-2': 'FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD' },
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'ingest',
          bucket: { name: bucket, ownerIdentity: { principalId: 'A3NL1KOZZKExample' }, arn: `arn:aws:s3:::${bucket}` },
          object: { key: encodedKey, size, eTag: normalizeEtag(etag), sequencer: '0055AED6DCD90281E5' },
        },
      },
    ],
  };
}
