/**
 * Seeded user records like the original design material's UserFrog (seed 004): id, name, birthday, createTime,
 * position, and the partition field dt (createTime's date). For demos, tests and benchmarks.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';

const NAMES = [
  'Alice',
  'Bob',
  'Carol',
  'Diana',
  'Erik',
  'Fatima',
  'Gao',
  'Hana',
  'Ivan',
  'Jun',
  'Kofi',
  'Lena',
  'Mateo',
  'Nia',
  'Omar',
  'Priya',
  'Quinn',
  'Rui',
  'Sven',
  'Tariq',
  'Uma',
  'Vera',
  'Wei',
  'Xavier',
  'Yara',
  'Zoe',
];
const POSITIONS = [
  'engineer',
  'analyst',
  'designer',
  'manager',
  'director',
  'accountant',
  'recruiter',
  'scientist',
  'support',
  'sales',
  'marketing',
  'operations',
  'legal',
  'product owner',
  'architect',
  'intern',
];

export interface UserRecord {
  id: number;
  name: string;
  /** yyyy-MM-dd */
  birthday: string;
  /** yyyy-MM-dd HH:mm:ss (UTC), as the seed's JSON */
  createTime: string;
  position: string;
  /** yyyy-MM-dd of createTime: the partition field */
  dt: string;
}

export interface GenerateOptions {
  count: number;
  seed: number;
  /** First id; ids are consecutive, so runs with overlapping ranges produce updates. */
  idStart?: number;
  /** createTime spreads over this many days from `startDate`. */
  days?: number;
  startDate?: string;
}

/** mulberry32: small, fast, seedable. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const day = (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
const dateTime = (d: Date) => `${day(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

export function* generateUsers(options: GenerateOptions): Generator<UserRecord> {
  const random = seededRandom(options.seed);
  const start = Date.parse(`${options.startDate ?? '2024-01-01'}T00:00:00Z`);
  const span = (options.days ?? 3) * 86_400_000;
  const birthdayStart = Date.UTC(1970, 1, 1);
  const birthdaySpan = Date.UTC(2005, 3, 1) - birthdayStart;
  for (let i = 0; i < options.count; i++) {
    const created = new Date(start + Math.floor(random() * span));
    yield {
      id: (options.idStart ?? 1) + i,
      name: NAMES[Math.floor(random() * NAMES.length)]!,
      birthday: day(new Date(birthdayStart + Math.floor(random() * birthdaySpan))),
      createTime: dateTime(created),
      position: POSITIONS[Math.floor(random() * POSITIONS.length)]!,
      dt: day(created),
    };
  }
}

/** Write records as JSON lines. */
export async function writeJsonLines(file: string, records: Iterable<object>): Promise<number> {
  await mkdir(dirname(file), { recursive: true });
  const out = createWriteStream(file);
  let count = 0;
  for (const record of records) {
    if (!out.write(`${JSON.stringify(record)}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    count++;
  }
  out.end();
  await finished(out);
  return count;
}
