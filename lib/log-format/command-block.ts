/**
 * COMMAND_BLOCK (HoodieCommandBlock): no content; the header says what to do. The one command is ROLLBACK_BLOCK
 * (COMMAND_BLOCK_TYPE "0"): readers drop the blocks of TARGET_INSTANT_TIME that precede it in the file slice.
 * Hudi writes it with INSTANT_TIME = the rollback instant, into a new log file with write token 1-0-1.
 */
import type { LogBlock, LogBlockHeader, LogBlockInput } from './block.js';
import { LogFormatError, UnsupportedLogBlockError } from './errors.js';

/** HoodieCommandBlock.HoodieCommandBlockTypeEnum, in ordinal order. */
export const COMMAND_BLOCK_TYPES = ['ROLLBACK_BLOCK'] as const;
export type CommandBlockType = (typeof COMMAND_BLOCK_TYPES)[number];

export interface CommandBlock {
  readonly command: CommandBlockType;
  readonly instantTime: string | undefined;
  readonly targetInstantTime: string | undefined;
}

/** The rollback command block a rollback of `targetInstantTime` (at `instantTime`) appends. */
export function rollbackCommandBlock(options: { instantTime: string; targetInstantTime: string; header?: LogBlockHeader }): LogBlockInput {
  return {
    type: 'COMMAND_BLOCK',
    header: {
      ...options.header,
      INSTANT_TIME: options.instantTime,
      TARGET_INSTANT_TIME: options.targetInstantTime,
      COMMAND_BLOCK_TYPE: String(COMMAND_BLOCK_TYPES.indexOf('ROLLBACK_BLOCK')),
    },
    content: new Uint8Array(0),
  };
}

/** What a read COMMAND_BLOCK commands. */
export function readCommandBlock(block: LogBlock, location?: string): CommandBlock {
  const where = location === undefined ? {} : { location };
  if (block.type !== 'COMMAND_BLOCK') {
    throw new UnsupportedLogBlockError(`block at offset ${block.offset} is a ${block.type}, not a COMMAND_BLOCK`, where);
  }
  const ordinalText = block.header.COMMAND_BLOCK_TYPE;
  // Hudi parses it with Integer.parseInt and indexes the enum: anything else fails there too.
  const command = ordinalText !== undefined && /^\d+$/.test(ordinalText) ? COMMAND_BLOCK_TYPES[Number(ordinalText)] : undefined;
  if (command === undefined) {
    throw new LogFormatError(`command block at offset ${block.offset} has COMMAND_BLOCK_TYPE ${JSON.stringify(ordinalText)}, not a command`, where);
  }
  return { command, instantTime: block.header.INSTANT_TIME, targetInstantTime: block.header.TARGET_INSTANT_TIME };
}
