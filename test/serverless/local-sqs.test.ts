/**
 * lib/serverless/local/sqs.ts against the local stack's SQS (moto; ElasticMQ under with-local-stack --elasticmq):
 * what the ingest bench and the stream demo use as the event source mapping's queue.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { LocalQueue } from '../../lib/serverless/local/sqs.js';

test('sendAll sends every message, ten a request, beside single sends; one batch takes them all', async () => {
  const queue = await LocalQueue.create(`local-sqs-${randomUUID().slice(0, 8)}`);
  const bodies = Array.from({ length: 23 }, (_, i) => JSON.stringify({ object: i }));
  await queue.sendAll(bodies);
  await queue.send(JSON.stringify({ object: 23 }));
  const batch = await queue.nextBatch(100);
  assert.deepEqual(batch.map((message) => message.Body).sort(), [...bodies, JSON.stringify({ object: 23 })].sort());
  assert.equal(queue.eventOf(batch).Records.length, 24);
  assert.deepEqual(await queue.receive(), [], 'no message twice');
});

test('the event carries the receive count SQS gave each message (the ingest function reads it)', async () => {
  const queue = await LocalQueue.create(`local-sqs-${randomUUID().slice(0, 8)}`);
  await queue.sendAll(['{"object":0}', '{"object":1}']);
  const batch = await queue.nextBatch(10);
  assert.deepEqual(
    batch.map((message) => message.Attributes?.['ApproximateReceiveCount']),
    ['1', '1'],
    'the server answered the count',
  );
  assert.deepEqual(
    queue.eventOf(batch).Records.map((record) => record.attributes.ApproximateReceiveCount),
    ['1', '1'],
  );
});
