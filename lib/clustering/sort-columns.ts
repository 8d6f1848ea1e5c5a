/**
 * The sort-column rules of a clustering, in one place: the vocabulary (layout linear / z-order / hilbert, curve
 * build method direct / sample), where a plan names its columns, which columns a table can be sorted by, and how a
 * group's rows are ordered — as Hudi's planner (strategy params), its space-curve sorter (column checks) and
 * MultipleSparkJobExecutionStrategy.getPartitioner (the order) decide. How the engine reads the columns' values is
 * the engine's business (lib/engine/sort-columns.ts); how curve keys are computed, lib/layout/curves.ts's.
 */
import { HudiError } from '../errors.js';
import type { CurveBuildMethod, CurveLayout } from '../layout/curves.js';
import { type AvroRecordSchema, fieldNames, withMetaFields } from '../table/schema.js';
import type { ClusteringPlan } from '../timeline/clustering-plan.js';

export type { CurveBuildMethod, CurveLayout };

/** hoodie.layout.optimize.strategy: how rows are ordered by the sort columns. */
export type SortLayout = 'linear' | CurveLayout;
export const SORT_LAYOUTS: readonly SortLayout[] = ['linear', 'z-order', 'hilbert'];
/** hoodie.layout.optimize.curve.build.method, lower-cased. */
export const CURVE_BUILD_METHODS: readonly CurveBuildMethod[] = ['direct', 'sample'];

/** What the rules read of a clustering config. */
export interface SortSettings {
  /** hoodie.clustering.plan.strategy.sort.columns, in order. */
  readonly sortColumns: readonly string[];
  readonly layoutOptimizationStrategy: SortLayout;
  readonly curveBuildMethod: CurveBuildMethod;
}

/** The strategy param naming the sort columns (comma-separated), as Hudi writes it into plans. */
export const SORT_COLUMNS_KEY = 'hoodie.clustering.plan.strategy.sort.columns';

/** SparkSizeBasedClusteringPlanStrategy.getStrategyParams: only the sort columns, when set. */
export function sortColumnsParams(settings: Pick<SortSettings, 'sortColumns'>): Record<string, string> {
  return settings.sortColumns.length > 0 ? { [SORT_COLUMNS_KEY]: settings.sortColumns.join(',') } : {};
}

/** The sort columns a plan names (its strategy params decide, as in Hudi's executor). */
export function planSortColumns(plan: ClusteringPlan): string[] {
  return (plan.strategy.strategyParams[SORT_COLUMNS_KEY] ?? '')
    .split(',')
    .map((column) => column.trim())
    .filter((column) => column !== '');
}

/**
 * The sort columns must be the table's (exact, case-sensitive names, as Hudi's space-curve sorter checks them).
 * Throws a HudiError naming the missing columns and listing the table's.
 */
export function validateSortColumns(settings: Pick<SortSettings, 'sortColumns'>, tableColumns: readonly string[]): void {
  const known = new Set(tableColumns);
  const missing = settings.sortColumns.filter((column) => !known.has(column));
  if (missing.length === 0) return;
  const plural = missing.length > 1 ? 's' : '';
  throw new HudiError(`sort column${plural} ${missing.map((column) => `"${column}"`).join(', ')} not in the table`, {
    location: SORT_COLUMNS_KEY,
    fix: `use columns of the table: ${tableColumns.join(', ')}`,
  });
}

/** Avro types Hudi's curve builders can order by (after Spark's Avro → SQL mapping). */
function curveSortable(type: unknown): boolean {
  if (Array.isArray(type)) {
    const branches = type.filter((branch) => branch !== 'null');
    return branches.length === 1 && curveSortable(branches[0]);
  }
  if (typeof type === 'string') return ['int', 'long', 'float', 'double', 'string', 'boolean', 'bytes'].includes(type);
  if (type !== null && typeof type === 'object') {
    const named = type as { type?: unknown; logicalType?: unknown };
    if (named.type === 'enum' || named.type === 'fixed') return true;
    if (typeof named.type === 'string') return curveSortable(named.type);
  }
  return false;
}

/**
 * Check the sort columns against the table schema before anything is written: they must exist (meta columns
 * included, as Hudi sorts the rows with them) and, when a curve will be built, have a primitive type; and the
 * layout must be one Hudi can build over that many columns.
 */
export function validateSortColumnsForSchema(settings: SortSettings, schema: AvroRecordSchema, location: string): void {
  const withMeta = withMetaFields(schema);
  validateSortColumns(settings, fieldNames(withMeta));
  const order = groupOrder(settings.sortColumns, settings);
  if (order.kind !== 'curve') return;
  for (const column of order.columns) {
    const field = withMeta.fields.find((candidate) => candidate.name === column);
    if (field !== undefined && !curveSortable(field.type)) {
      throw new HudiError(`sort column "${column}" has type ${JSON.stringify(field.type)}, which ${order.layout} ordering cannot take`, {
        location,
        fix: 'sort by primitive columns (numbers, strings, dates, timestamps, decimals), or use hoodie.layout.optimize.strategy=linear',
      });
    }
  }
}

/** How a group's rows were ordered. */
export type GroupOrderKind = 'input' | SortLayout;

export type GroupOrder =
  | { readonly kind: 'input' }
  | { readonly kind: 'linear'; readonly columns: readonly string[] }
  | { readonly kind: 'curve'; readonly layout: CurveLayout; readonly buildMethod: CurveBuildMethod; readonly columns: readonly string[] };

/**
 * How to order a group (MultipleSparkJobExecutionStrategy.getPartitioner): no sort columns → input order; linear →
 * ORDER BY the columns; z-order / hilbert → a curve, except with one column and the direct build method, where Hudi
 * range-sorts on the column (SpaceCurveSortingHelper), which is a linear sort. A hilbert curve over one column
 * (sample build method) fails in Hudi, and is refused here.
 */
export function groupOrder(sortColumns: readonly string[], settings: Pick<SortSettings, 'layoutOptimizationStrategy' | 'curveBuildMethod'>): GroupOrder {
  if (sortColumns.length === 0) return { kind: 'input' };
  const layout = settings.layoutOptimizationStrategy;
  if (layout === 'linear') return { kind: 'linear', columns: [...sortColumns] };
  const buildMethod = settings.curveBuildMethod;
  if (buildMethod === 'direct' && sortColumns.length === 1) return { kind: 'linear', columns: [...sortColumns] };
  if (layout === 'hilbert' && sortColumns.length === 1) {
    throw new HudiError('hilbert with one sort column and curve.build.method SAMPLE fails in Hudi (a Hilbert curve needs 2+ dimensions)', {
      location: 'hoodie.layout.optimize.curve.build.method',
      fix: 'use DIRECT (one column is then sorted linearly), or add a second sort column (to a new plan, when one is pending)',
    });
  }
  return { kind: 'curve', layout, buildMethod, columns: [...sortColumns] };
}

/** The kind of order, as a group result and the report name it. */
export function groupOrderKind(order: GroupOrder): GroupOrderKind {
  return order.kind === 'curve' ? order.layout : order.kind;
}
