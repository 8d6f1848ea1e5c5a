import { HudiError } from '../errors.js';

/** The bytes are not an HFile this module can read (truncated, corrupt, or a feature Hudi never writes). */
export class HFileFormatError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string; cause?: unknown } = {}) {
    super(problem, options);
    this.name = 'HFileFormatError';
  }
}

/** The cells or options given to the HFile writer cannot make a valid HFile (unsorted keys, oversized rows, ...). */
export class HFileWriteError extends HudiError {
  constructor(problem: string, options: { fix?: string } = {}) {
    super(problem, options);
    this.name = 'HFileWriteError';
  }
}
