/**
 * The configuration kernel: keys defined once (lib/config/key.ts). The settings modules that use it keep their
 * typed results next to the code that reads them (clustering/config.ts, writer/write-config.ts, …).
 */
export {
  anyText,
  bool,
  commaList,
  ConfigValueError,
  decimalNumber,
  defineKey,
  envVarForKey,
  oneOf,
  optionalText,
  parseKeyText,
  rawValue,
  readKey,
  readKeys,
  javaInt,
  javaLong,
  namedValue,
  type ConfigKey,
  type ConfigValues,
  type KeyOptions,
  type Parser,
  type Parsed,
  type ParseContext,
} from './key.js';
