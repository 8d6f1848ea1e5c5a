/**
 * Errors of the log format. Corruption that Hudi's reader tolerates (a torn last block, garbage between blocks) is
 * not an error: it comes back as a CORRUPT_BLOCK. These are for bytes Hudi's reader itself would refuse.
 */
import { HudiError } from '../errors.js';

/** The bytes are not a Hudi log file, or a block's fields contradict each other. */
export class LogFormatError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string; cause?: unknown } = {}) {
    super(problem, {
      fix: 'the file was not written by Hudi or was damaged in a way Hudi cannot read either; restore it from a backup',
      ...options,
    });
    this.name = 'LogFormatError';
  }
}

/** A valid block whose content this build cannot decode (an older serialization, an unknown command). */
export class UnsupportedLogBlockError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'UnsupportedLogBlockError';
  }
}
