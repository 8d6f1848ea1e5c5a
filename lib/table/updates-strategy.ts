/**
 * What a write does with file groups in a pending clustering plan (HoodieClusteringConfig.UPDATES_STRATEGY): the
 * writer reads it before it writes, the clustering planner and executor when they resolve a conflict.
 */
import { defineKey, oneOf } from '../config/index.js';

const UPDATE_STRATEGY_PACKAGE = 'org.apache.hudi.client.clustering.update.strategy';
export const REJECT_UPDATE_STRATEGY = `${UPDATE_STRATEGY_PACKAGE}.SparkRejectUpdateStrategy`;
export const ALLOW_UPDATE_STRATEGY = `${UPDATE_STRATEGY_PACKAGE}.SparkAllowUpdateStrategy`;
export type UpdatesStrategyClass = typeof REJECT_UPDATE_STRATEGY | typeof ALLOW_UPDATE_STRATEGY;

export const UPDATES_STRATEGY = defineKey({
  key: 'hoodie.clustering.updates.strategy',
  default: REJECT_UPDATE_STRATEGY as UpdatesStrategyClass,
  parser: oneOf([REJECT_UPDATE_STRATEGY, ALLOW_UPDATE_STRATEGY] as const, { exactCase: true }),
  description: 'Updates to file groups in a pending clustering plan: SparkRejectUpdateStrategy refuses them, SparkAllowUpdateStrategy lets them through.',
});
