/**
 * The configuration kernel: keys defined once (lib/config/key.ts). The settings modules that use it keep their
 * typed results next to the code that reads them (clustering/config.ts, writer/write-config.ts, …).
 */
export {
  anyText,
  bool,
  type ConfigKey,
  ConfigValueError,
  type ConfigValues,
  commaList,
  decimalNumber,
  definedKeys,
  defineKey,
  envVarForKey,
  javaInt,
  javaLong,
  type KeyOptions,
  keysReadBy,
  namedValue,
  noteKeyRead,
  oneOf,
  optionalText,
  type ParseContext,
  type Parsed,
  type Parser,
  parseKeyText,
  rawValue,
  readKey,
  readKeys,
} from './key.js';
