/**
 * Reading the JSON events the clustering Lambdas receive (from Step Functions, EventBridge, or a person's
 * `aws lambda invoke`): untrusted values, checked field by field into typed inputs.
 */
import { EventError, HudiError } from '../../errors.js';
import { isValidInstantTime } from '../../timeline/instant.js';
import type { StateError } from '../aws/errors.js';
import { type ClusteringExecutionInput, parsePropertyOverrides, RUN_SERVICES, type RunServices } from '../aws/settings.js';

export type JsonObject = Readonly<Record<string, unknown>>;

export function asObject(value: unknown, what: string): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HudiError(`${what} must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value as JsonObject;
}

export function optionalString(object: JsonObject, key: string, what: string): string | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new HudiError(`${what}.${key} must be a string`);
  return value;
}

export function requiredString(object: JsonObject, key: string, what: string): string {
  const value = optionalString(object, key, what);
  if (value === undefined || value === '') throw new HudiError(`${what}.${key} is missing`);
  return value;
}

/**
 * An instant time field (yyyyMMddHHmmssSSS, or Hudi's older yyyyMMddHHmmss): the steps build timeline paths from it,
 * so anything else is refused before a path is formed.
 */
export function optionalInstant(object: JsonObject, key: string, what: string): string | undefined {
  const value = optionalString(object, key, what);
  if (value === undefined) return undefined;
  if (!isValidInstantTime(value)) {
    throw new EventError(`${what}.${key} ${JSON.stringify(value.slice(0, 40))} is not an instant time`, {
      location: `${what}.${key}`,
      fix: 'give the instant time as the timeline names it, e.g. 20240707001301554 (see `hudi-serverless timeline <table>`)',
    });
  }
  return value;
}

export function requiredInstant(object: JsonObject, key: string, what: string): string {
  requiredString(object, key, what);
  return optionalInstant(object, key, what)!;
}

export function optionalBoolean(object: JsonObject, key: string, what: string): boolean | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new HudiError(`${what}.${key} must be true or false`);
  return value;
}

export function requiredIndex(object: JsonObject, key: string, what: string): number {
  const value = object[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new HudiError(`${what}.${key} must be a group index (a whole number ≥ 0)`);
  return value;
}

/** The fields every clustering step shares: which table, and the run's property overrides. */
export function executionInputOf(object: JsonObject, what: string): ClusteringExecutionInput {
  const tablePath = optionalString(object, 'tablePath', what);
  const force = optionalBoolean(object, 'force', what);
  const services = optionalServices(object, what);
  return {
    ...(tablePath === undefined ? {} : { tablePath }),
    properties: parsePropertyOverrides(object['properties'], `${what}.properties`),
    ...(force === undefined ? {} : { force }),
    ...(services === undefined ? {} : { services }),
  };
}

/** `services`: which table services a run does (settings.ts, RunServices). */
export function optionalServices(object: JsonObject, what: string): RunServices | undefined {
  const value = optionalString(object, 'services', what);
  if (value === undefined) return undefined;
  if (!(RUN_SERVICES as readonly string[]).includes(value)) {
    throw new HudiError(`${what}.services is "${value}"`, {
      fix: `give one of ${RUN_SERVICES.map((service) => `"${service}"`).join(', ')} (or leave it out: "all")`,
    });
  }
  return value as RunServices;
}

export function requiredNonNegative(object: JsonObject, key: string, what: string): number {
  const value = object[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new HudiError(`${what}.${key} must be a whole number ≥ 0`);
  return value;
}

/** A Step Functions error object (a Catch's `ResultPath` value), if the event carries one. */
export function optionalStateError(object: JsonObject, key: string): StateError | undefined {
  const value = object[key];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const error = (value as JsonObject)['Error'];
  const cause = (value as JsonObject)['Cause'];
  if (typeof error !== 'string') return undefined;
  return typeof cause === 'string' ? { Error: error, Cause: cause } : { Error: error };
}
