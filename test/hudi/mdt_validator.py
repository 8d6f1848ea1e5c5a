"""Checks that a Hudi table's metadata table (MDT, ``.hoodie/metadata``) agrees with the file system.

A Python re-expression of Apache Hudi 0.15's ``org.apache.hudi.utilities.HoodieMetadataTableValidator`` for tests:
that class ships only in the hudi-utilities bundles, which this machine's Maven mirror does not serve, while
``hudi-spark3.5-bundle_2.12:0.15.0`` carries every class the validator itself calls. So Hudi's own Java code does
all the reading here, driven through PySpark's py4j gateway (``spark._jvm``); only the comparisons are Python, and
they compare what the validator compares, with the same pass/fail outcome, plus diffs that name the partition and
file that disagree.

Hudi 1.0.2 and 1.1.1 (the same file; ``_Hudi`` picks each call by the bundle's classes, as each release's own
validator makes it): instant times by ``requestedTime()`` and ``InstantComparison``, partitions by 1.0's
``getAllPartitionPaths(context, storage, basePath, useMetadata)`` or 1.1's ``(context, metaClient, useMetadata)``,
table metadata by ``HoodieTableMetadata.create`` or 1.1's ``metaClient.getTableFormat().getMetadataFactory()``,
commit metadata by ``timeline.readCommitMetadata``, column stats by ``HoodieColumnRangeMetadata.fromColumnStats``
(1.1: ``org.apache.hudi.stats``, footers read at the column_stats index version). Every check runs on all three
releases. 1.x specifics: column stats compare the columns the index definition declares (1.x indexes a configured
or capped subset; see ``_indexed_columns``) of latest base files only (1.x also indexes log files of merge-on-read slices:
not compared here); the 1.x validator's ``partition-stats`` and ``secondary-index`` checks are not ported (its
partition-stats check needs Spark-side ``PartitionStatsIndexSupport``); ``record-index-*`` read the MDT with Spark
as on 0.15.

Usage::

    from mdt_validator import validate_metadata_table
    result = validate_metadata_table(spark, "/tmp/table")          # every check
    result = validate_metadata_table(spark, path, checks=["latest-file-slices", "bloom-filters"])
    assert result["ok"], json.dumps(result, indent=2)

or from a shell (starts a local SparkSession; the bundle jar comes from ``--jar`` or ``$HUDI_SPARK_BUNDLE``)::

    python test/hudi/mdt_validator.py /tmp/table [--checks latest-file-slices,bloom-filters] [--jar bundle.jar]

``spark`` must have the Hudi Spark bundle on its classpath (``spark.jars``). A local path may be given bare: it is
turned into ``file:/abs/path``, as the validator requires (its docs: local base paths need the ``file:`` prefix,
otherwise MDT-based paths and listed paths differ only by scheme).

Result (JSON-able)::

    {"ok": bool,                  # no error and no failed check
     "checks": {name: {"status": "passed" | "failed" | "not-enabled",
                       "details": str,              # "" when passed; what disagrees, per partition and file
                       "counts": {str: int}}},
     "errors": [str],             # why something could not be validated (no MDT, a Java exception, ...)
     "base_path": str, "latest_completed_instant": str | None, "mdt_synced_instant": str | None,
     "seconds": {name: float}}    # wall time per check, plus "setup" and "total"

A table without a metadata table gives ``ok: False`` and the error ``"no metadata table ..."``; nothing is raised
for table problems (only for a bad ``checks`` argument).

Checks (names are the validator's CLI flags without ``--validate-``; ``checks=None`` runs them all; the partition
check always runs, as in the validator):

``partitions``
    ``FSUtils.getAllPartitionPaths(engineContext, storage, basePath, useMetadata, false)`` with the metadata table
    (``HoodieBackedTableMetadata``) and without (``FileSystemBackedTableMetadata``). Partitions listed on storage
    are kept only if their ``.hoodie_partition_metadata`` (``HoodiePartitionMetadata.readPartitionCreatedCommitTime``)
    names a commit that is in the completed commits timeline, before the active timeline starts, or not after its
    last completed instant; a partition only the MDT lists is forgiven when it was created after the last completed
    instant (a commit finishing between the two listings). As in the validator, the per-partition checks then run
    over the MDT's partition list.

``latest-file-slices``, ``latest-base-files``, ``all-file-groups``
    Two validation contexts, as ``HoodieMetadataValidationContext`` builds them: a ``HoodieMetadataConfig`` with
    ``enable``/bloom/column-stats/record-index all true (MDT-based) or all false (file-system-based), a view from
    ``FileSystemViewManager.createInMemoryFileSystemView(engineContext, metaClient, metadataConfig)`` (a
    ``HoodieMetadataFileSystemView`` over ``HoodieBackedTableMetadata``, or a ``HoodieTableFileSystemView`` that lists
    storage), and ``HoodieTableMetadata.create(...)``. Both views see
    ``metaClient.getActiveTimeline().filterCompletedAndCompactionInstants()``, so files written by pending, inflight
    or failed instants are left out by Hudi's own view logic on both sides. Compared: ``getLatestFileSlices(p)``,
    ``getLatestBaseFiles(p)`` and the file slices of ``getAllFileGroups(p)``; slices by file group id, base instant and
    base file; log files that only one side has fail the check only if they are committed (first block's instant
    completed and the log file named by that commit's write stats, or the instant archived; a log file without a
    readable schema or that cannot be read is taken as uncommitted), as ``areFileSliceCommittedLogFilesMatching``
    does; base files by ``HoodieBaseFile.equals`` (the path) and, see below, their sizes.

``all-column-stats``
    For the latest base files (from the file-system view) of each partition, every column of
    ``TableSchemaResolver.getTableAvroSchema()`` (meta fields included): ``HoodieTableMetadata.getColumnStats(
    [(partition, file)], column)`` through ``HoodieTableMetadataUtil.convertColumnStatsRecordToColumnRangeMetadata``
    versus ``FileFormatUtils.readColumnStatsFromMetadata`` (``ParquetUtils``, the Parquet footers), compared by
    ``HoodieColumnRangeMetadata.equals`` (file, column, min, max, null count, value count, sizes).
    "not-enabled" when ``hoodie.table.metadata.partitions`` lacks ``column_stats``.

``bloom-filters``
    ``HoodieTableMetadata.getBloomFilters`` versus the base file's footer bloom filter
    (``HoodieSparkIOFactory...getReaderFactory(AVRO).getFileReader(config, path).readBloomFilter()``), compared as
    ``BloomFilter.serializeToString()``, as the validator's ``BloomFilterData`` does. "not-enabled" without the
    ``bloom_filters`` partition.

``record-index-count``, ``record-index-content``
    The data table read by Spark as of its latest completed instant (``as.of.instant``) versus the MDT read by Spark
    (``type = 5`` rows), record locations decoded by ``HoodieTableMetadataUtil.getLocationFromRecordIndexInfo`` and
    ``FSUtils.getFileId``; the count compares row counts, the content joins on record key and compares (partition,
    file id), ignoring index entries newer than that instant. (The validator runs content instead of count when both
    are asked for; here both run.) "not-enabled" without the ``record_index`` partition.

Timeline: like the validator, both sides use the data table's completed timeline as loaded now; nothing is cut
at the MDT's last synced instant (reported as ``mdt_synced_instant``). A completed data-table commit the MDT has
not seen therefore shows up as a mismatch, which is the point; the MDT reader itself
(``HoodieBackedTableMetadata``) ignores MDT records of data-table instants that are not completed.

Source: 0.15's validator is not in Hudi's current tree; the text read was the 0.15-era revision (the one using
``HoodieStorage``, ``FileFormatUtils.readColumnStatsFromMetadata`` and ``createInMemoryFileSystemView``), checked
against the classes and signatures in the 0.15.0 bundle.

Where this differs from the validator, deliberately:
- column stats of date and decimal columns: 0.15 reads them from the MDT as raw epoch days and unscaled bytes
  (see ``_decode_wrapped_stats``), so its validator reports every such column as a mismatch; here they are
  decoded as Hudi 1.x decodes them and then compared (``counts.column_stats_decoded`` says how many).
- base file sizes are compared too (MDT versus storage), as Hudi 1.x's validator does; 0.15 compares paths only.
- column stats are looked up once per column for all partitions, not per partition and column (same records).
- a missing metadata table, or one with no completed instant, or a table with no completed commit, is an error
  (``ok: False``); the validator logs and passes in the first and last case.
- an MDT index partition that is absent gives "not-enabled" instead of a comparison against nothing.
- an MDT directory that ``hoodie.properties`` does not declare (``hoodie.table.metadata.partitions`` without
  ``files``) is an error: Hudi's readers would silently list storage instead, so every check would pass vacuously.
- a failed partition check does not stop the per-partition checks; every check reports, instead of the first
  ``HoodieValidationException`` ending the run.
- per-partition checks run on the driver, one partition after another (the validator maps them over Spark tasks).
- ``--skip-data-files-for-cleaning`` is the keyword ``skip_data_files_for_cleaning`` (default False, like the flag).
"""

from __future__ import annotations

import argparse
import decimal
import hashlib
import json
import os
import sys
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from py4j.java_gateway import JavaClass, JavaObject
from py4j.protocol import Py4JError

try:  # PySpark re-raises some Java exceptions as its own types, which are not py4j errors
    from pyspark.errors.exceptions.captured import CapturedException
except ImportError:  # PySpark before 3.4
    from pyspark.sql.utils import CapturedException  # type: ignore[no-redef]

_JAVA_ERRORS = (Py4JError, CapturedException)

CHECKS: Tuple[str, ...] = (
    "partitions",
    "latest-file-slices",
    "latest-base-files",
    "all-file-groups",
    "all-column-stats",
    "bloom-filters",
    "record-index-count",
    "record-index-content",
)
_PER_PARTITION = ("latest-file-slices", "latest-base-files", "all-file-groups", "all-column-stats", "bloom-filters")
# Like the validator's --num-record-index-error-samples default.
_RECORD_INDEX_SAMPLES = 100
# Detail lines kept per check, so a badly broken table still gives a readable report.
_MAX_DETAIL_LINES = 200


class _CheckFailed(Exception):
    """A comparison found a disagreement: the detail text, the counts, and the check's by-product if any."""

    def __init__(self, detail: "_Detail") -> None:
        super().__init__(detail.text())
        self.detail = detail


def validate_metadata_table(
    spark: Any,
    base_path: str,
    checks: Optional[Iterable[str]] = None,
    *,
    skip_data_files_for_cleaning: bool = False,
) -> Dict[str, Any]:
    """Compare the table's metadata table with its file system, as HoodieMetadataTableValidator does (0.15, 1.x)."""
    wanted = _wanted_checks(checks)
    started = time.time()
    base_path = _qualify(base_path)
    result: Dict[str, Any] = {
        "ok": False,
        "checks": {},
        "errors": [],
        "base_path": base_path,
        "latest_completed_instant": None,
        "mdt_synced_instant": None,
        "seconds": {},
    }
    hudi = _Hudi(spark)
    if not hudi.loaded():
        result["errors"].append("Hudi's classes are not on this SparkSession's classpath: start it with "
                                "spark.jars=.../hudi-spark3.5-bundle_2.12-0.15.0.jar")
        return _finish(result, started)
    contexts: List[_Context] = []
    try:
        table = _open_table(hudi, base_path, result["errors"])
        if table is None:
            return _finish(result, started)
        meta_client, latest = table
        result["latest_completed_instant"] = latest
        mdt_context = _Context(hudi, meta_client, enable_metadata=True)
        contexts.append(mdt_context)
        fs_context = _Context(hudi, meta_client, enable_metadata=False)
        contexts.append(fs_context)
        synced = mdt_context.table_metadata.getSyncedInstantTime()
        result["mdt_synced_instant"] = synced.get() if synced.isPresent() else None
        result["seconds"]["setup"] = round(time.time() - started, 3)

        partitions = _run(result, "partitions", lambda: _check_partitions(hudi, meta_client))
        if partitions == []:
            result["errors"].append("the metadata table lists no partition: nothing to validate per partition "
                                    "(the validator skips such a table)")
        cleaning: set = set()
        if skip_data_files_for_cleaning:
            try:
                cleaning = _base_files_for_cleaning(hudi, meta_client)
            except _JAVA_ERRORS as error:
                result["errors"].append("reading the inflight clean plans failed: " + _java_message(error))
        validator = _PartitionChecks(hudi, meta_client, mdt_context, fs_context, cleaning)
        for name in _PER_PARTITION:
            if name not in wanted:
                continue
            if partitions is None:
                result["checks"][name] = {"status": "failed", "counts": {},
                                          "details": "not run: the MDT's partition list could not be read"}
                continue
            _run(result, name, lambda name=name: validator.run(name, partitions))
        for name in ("record-index-count", "record-index-content"):
            if name in wanted:
                _run(result, name, lambda name=name: _check_record_index(hudi, spark, meta_client, base_path, latest, name))
    except _JAVA_ERRORS as error:
        result["errors"].append("unexpected Java error: " + _java_message(error))
    finally:
        for context in contexts:
            context.close()
    return _finish(result, started)


# ---------------------------------------------------------------------------------------------------------------
# Set-up


class _Hudi:
    """Handles to the Java classes used, resolved once through the py4j gateway."""

    def __init__(self, spark: Any) -> None:
        jvm = spark._jvm
        self.jvm = jvm
        self.spark = spark
        hudi = jvm.org.apache.hudi
        self.FSUtils = hudi.common.fs.FSUtils
        self.HadoopFSUtils = hudi.hadoop.fs.HadoopFSUtils
        self.HoodieTableMetaClient = hudi.common.table.HoodieTableMetaClient
        self.TableSchemaResolver = hudi.common.table.TableSchemaResolver
        self.HoodieMetadataConfig = hudi.common.config.HoodieMetadataConfig
        self.HoodieConfig = hudi.common.config.HoodieConfig
        self.HoodieReaderConfig = hudi.common.config.HoodieReaderConfig
        self.FileSystemViewManager = hudi.common.table.view.FileSystemViewManager
        self.HoodieTableMetadata = hudi.metadata.HoodieTableMetadata
        self.HoodieTableMetadataUtil = hudi.metadata.HoodieTableMetadataUtil
        self.HoodieColumnRangeMetadata = hudi.common.model.HoodieColumnRangeMetadata
        self.MetadataPartitionType = hudi.metadata.MetadataPartitionType
        self.HoodiePartitionMetadata = hudi.common.model.HoodiePartitionMetadata
        self.HoodieFileFormat = hudi.common.model.HoodieFileFormat
        self.HoodieRecordType = getattr(hudi.common.model, "HoodieRecord$HoodieRecordType")
        self.HoodieCommitMetadata = hudi.common.model.HoodieCommitMetadata
        self.HoodieLogFile = hudi.common.model.HoodieLogFile
        self.HoodieLogFormat = hudi.common.table.log.HoodieLogFormat
        self.HeaderMetadataType = getattr(hudi.common.table.log.block, "HoodieLogBlock$HeaderMetadataType")
        self.HoodieTimeline = hudi.common.table.timeline.HoodieTimeline
        self.HoodieInstant = hudi.common.table.timeline.HoodieInstant
        self.InstantState = getattr(hudi.common.table.timeline, "HoodieInstant$State")
        self.CleanerUtils = hudi.common.util.CleanerUtils
        self.HoodieIOFactory = hudi.io.storage.HoodieIOFactory
        self.HoodieSparkIOFactory = hudi.io.storage.HoodieSparkIOFactory
        self.StoragePath = hudi.storage.StoragePath
        self.Pair = hudi.common.util.collection.Pair
        self.ArrayList = jvm.java.util.ArrayList
        self.Collectors = jvm.java.util.stream.Collectors
        # Without the bundle on the classpath py4j hands out packages, not classes.
        self.available = isinstance(self.FSUtils, JavaClass)
        # Hudi 1.x moved instant times (requestedTime, InstantComparison) and 1.1 the table-metadata factory.
        self.v1 = isinstance(hudi.common.table.timeline.InstantComparison, JavaClass)
        self.v11 = isinstance(hudi.common.HoodieTableFormat, JavaClass)
        self.line = "1.1" if self.v11 else "1.0" if self.v1 else "0.15"
        if self.available:
            self.engine_context = hudi.client.common.HoodieSparkEngineContext(spark._jsc)
            self.storage_conf = self.HadoopFSUtils.getStorageConfWithCopy(spark._jsc.hadoopConfiguration())

    def loaded(self) -> bool:
        return self.available

    def to_list(self, stream: Any) -> List[Any]:
        return list(stream.collect(self.Collectors.toList()))

    def java_list(self, items: Iterable[Any]) -> Any:
        out = self.ArrayList()
        for item in items:
            out.add(item)
        return out

    def meta_client(self, path: str) -> Any:
        return (self.HoodieTableMetaClient.builder().setConf(self.storage_conf).setBasePath(path)
                .setLoadActiveTimelineOnLoad(True).build())

    def partition_available(self, meta_client: Any, name: str) -> bool:
        return bool(meta_client.getTableConfig().isMetadataPartitionAvailable(getattr(self.MetadataPartitionType, name)))

    def newer(self, a: str, b: str) -> bool:
        if self.v1:
            comparison = self.jvm.org.apache.hudi.common.table.timeline.InstantComparison
            return bool(comparison.compareTimestamps(a, comparison.GREATER_THAN, b))
        return bool(self.HoodieTimeline.compareTimestamps(a, self.HoodieTimeline.GREATER_THAN, b))

    # -- what differs between Hudi 0.15, 1.0 and 1.1 (same calls the validator of each release makes) --------

    def time(self, instant: Any) -> str:
        """The instant's (requested) time: getTimestamp() in 0.15, requestedTime() in 1.x."""
        return instant.requestedTime() if self.v1 else instant.getTimestamp()

    def base_path(self, meta_client: Any) -> str:
        """The base path as text: 0.15's getBasePath() is a String, 1.x's a StoragePath."""
        path = meta_client.getBasePath()
        return path if isinstance(path, str) else path.toString()

    def partition_paths(self, meta_client: Any, use_metadata: bool) -> List[str]:
        storage, base = meta_client.getStorage(), self.base_path(meta_client)
        if self.v11:
            found = self.FSUtils.getAllPartitionPaths(self.engine_context, meta_client, use_metadata)
        elif self.v1:
            found = self.FSUtils.getAllPartitionPaths(self.engine_context, storage, base, use_metadata)
        else:
            found = self.FSUtils.getAllPartitionPaths(self.engine_context, storage, base, use_metadata, False)
        return list(found)

    def table_metadata(self, meta_client: Any, config: Any) -> Any:
        storage, base = meta_client.getStorage(), self.base_path(meta_client)
        if self.v11:
            return meta_client.getTableFormat().getMetadataFactory().create(self.engine_context, storage, config, base)
        return self.HoodieTableMetadata.create(self.engine_context, storage, config, base)

    def commit_metadata(self, timeline: Any, instant: Any) -> Any:
        if self.v1:
            return timeline.readCommitMetadata(instant)
        return self.HoodieCommitMetadata.fromBytes(timeline.getInstantDetails(instant).get(),
                                                   self.HoodieCommitMetadata().getClass())

    def requested(self, meta_client: Any, instant: Any) -> Any:
        if self.v1:
            return meta_client.createNewInstant(self.InstantState.REQUESTED, instant.getAction(), self.time(instant))
        return self.HoodieInstant(self.InstantState.REQUESTED, instant.getAction(), instant.getTimestamp())

    def column_range(self, stats: Any) -> Any:
        """An MDT column_stats record as HoodieColumnRangeMetadata, as each release's validator converts it."""
        if self.v11:
            return self.jvm.org.apache.hudi.stats.HoodieColumnRangeMetadata.fromColumnStats(stats)
        if self.v1:
            return self.HoodieColumnRangeMetadata.fromColumnStats(stats)
        return self.HoodieTableMetadataUtil.convertColumnStatsRecordToColumnRangeMetadata(stats)

    def footer_column_stats(self, utils: Any, storage: Any, path: Any, columns: Any, meta_client: Any,
                            partition: str) -> List[Any]:
        if self.v11:
            version = self.HoodieTableMetadataUtil.existingIndexVersionOrDefault(partition, meta_client)
            return list(utils.readColumnStatsFromMetadata(storage, path, columns, version))
        return list(utils.readColumnStatsFromMetadata(storage, path, columns))


def _open_table(hudi: _Hudi, base_path: str, errors: List[str]) -> Optional[Tuple[Any, Optional[str]]]:
    """The data table's meta client and latest completed instant, or None with the reason in errors."""
    try:
        meta_client = hudi.meta_client(base_path)
    except _JAVA_ERRORS as error:
        errors.append(f"not a Hudi table at {base_path}: {_java_message(error)}")
        return None
    mdt_path = hudi.HoodieTableMetadata.getMetadataTableBasePath(base_path)
    try:
        mdt_meta_client = hudi.meta_client(mdt_path)
    except _JAVA_ERRORS as error:
        if _java_class(error).endswith("TableNotFoundException"):
            errors.append(f"no metadata table at {mdt_path} (write with hoodie.metadata.enable=true)")
        else:
            errors.append(f"no metadata table readable at {mdt_path}: {_java_message(error)}")
        return None
    if not meta_client.getTableConfig().isMetadataTableAvailable():
        declared = meta_client.getTableConfig().getMetadataPartitions()
        errors.append(
            f"no metadata table in use: {mdt_path} exists but hoodie.properties lists metadata partitions "
            f"{sorted(declared)} (hoodie.table.metadata.partitions must include 'files'), so Hudi readers "
            "ignore the metadata table and list storage")
        return None
    data_completed = meta_client.getCommitsTimeline().filterCompletedInstants().countInstants()
    mdt_completed = mdt_meta_client.getCommitsTimeline().filterCompletedInstants().countInstants()
    if data_completed == 0:
        errors.append("the data table has no completed commit: nothing to validate (the validator skips such a table)")
        return None
    if mdt_completed == 0:
        errors.append(f"There is no completed instant for metadata table: {mdt_path}")
        return None
    last = meta_client.getActiveTimeline().getCommitsAndCompactionTimeline().filterCompletedInstants().lastInstant()
    return meta_client, (hudi.time(last.get()) if last.isPresent() else None)


class _Context:
    """HoodieMetadataValidationContext: a file-system view and table metadata, with or without the MDT."""

    def __init__(self, hudi: _Hudi, meta_client: Any, enable_metadata: bool) -> None:
        self.hudi = hudi
        self.meta_client = meta_client
        self.enable_metadata = enable_metadata
        builder = (hudi.HoodieMetadataConfig.newBuilder().enable(enable_metadata)
                   .withMetadataIndexBloomFilter(enable_metadata).withMetadataIndexColumnStats(enable_metadata))
        # 1.1 renamed the record index switch (it added a partitioned record index beside the global one).
        builder = builder.withEnableGlobalRecordLevelIndex(enable_metadata) if hudi.v11 else builder.withEnableRecordIndex(enable_metadata)
        config = (builder if hudi.v1 else builder.withAssumeDatePartitioning(False)).build()  # gone in 1.x
        self.view = hudi.FileSystemViewManager.createInMemoryFileSystemView(hudi.engine_context, meta_client, config)
        self.table_metadata = hudi.table_metadata(meta_client, config)
        self.columns: List[str] = []
        if meta_client.getCommitsTimeline().filterCompletedInstants().countInstants() > 0:
            schema = hudi.TableSchemaResolver(meta_client).getTableAvroSchema()
            self.columns = [field.name() for field in schema.getFields()]

    def latest_base_files(self, partition: str) -> List[Any]:
        return self.hudi.to_list(self.view.getLatestBaseFiles(partition))

    def latest_file_slices(self, partition: str) -> List[Any]:
        return self.hudi.to_list(self.view.getLatestFileSlices(partition))

    def all_file_slices(self, partition: str) -> List[Any]:
        slices: List[Any] = []
        for group in self.hudi.to_list(self.view.getAllFileGroups(partition)):
            slices.extend(self.hudi.to_list(group.getAllFileSlices()))
        return slices

    def close(self) -> None:
        for closeable in (self.table_metadata, self.view):
            try:
                closeable.close()
            except Exception:  # closing is best effort, as in the validator
                pass


# ---------------------------------------------------------------------------------------------------------------
# Checks


class _Detail:
    """Collects detail lines (capped) and carries counts and a by-product through _CheckFailed."""

    def __init__(self, counts: Dict[str, int], value: Any = None) -> None:
        self.counts = counts
        self.value = value
        self.lines: List[str] = []
        self.dropped = 0

    def line(self, text: str) -> "_Detail":
        if len(self.lines) < _MAX_DETAIL_LINES:
            self.lines.append(text)
        else:
            self.dropped += 1
        return self

    def text(self) -> str:
        suffix = [f"... and {self.dropped} more lines"] if self.dropped else []
        return "\n".join(self.lines + suffix)


def _check_partitions(hudi: _Hudi, meta_client: Any) -> Tuple[List[str], Dict[str, int]]:
    """validatePartitions: the partition list from storage (committed partitions only) versus the MDT's."""
    storage = meta_client.getStorage()
    base_path = hudi.base_path(meta_client)
    completed = meta_client.getCommitsTimeline().filterCompletedInstants()
    last = completed.lastInstant()
    last_ts = hudi.time(last.get()) if last.isPresent() else None

    def created(partition: str) -> Optional[str]:
        metadata = hudi.HoodiePartitionMetadata(storage, hudi.FSUtils.constructAbsolutePath(base_path, partition))
        instant = metadata.readPartitionCreatedCommitTime()
        return instant.get() if instant.isPresent() else None

    def committed(partition: str) -> bool:
        instant = created(partition)
        if instant is None:
            return False
        if not completed.containsOrBeforeTimelineStarts(instant):
            return last_ts is not None and not hudi.newer(instant, last_ts)
        return True

    listed = hudi.partition_paths(meta_client, False)
    from_fs = sorted(p for p in listed if committed(p))
    from_mdt = sorted(hudi.partition_paths(meta_client, True))
    counts = {"partitions_fs": len(from_fs), "partitions_mdt": len(from_mdt),
              "partitions_listed_uncommitted": len(listed) - len(from_fs)}
    if from_fs == from_mdt:
        return from_mdt, counts
    only_fs = [p for p in from_fs if p not in from_mdt]
    only_mdt = [p for p in from_mdt if p not in from_fs]
    unexplained_mdt = list(only_mdt)
    if not only_fs and only_mdt:
        for partition in only_mdt:
            instant = created(partition)
            if instant is not None and not completed.containsInstant(instant) and last_ts is not None \
                    and hudi.newer(instant, last_ts):
                unexplained_mdt.remove(partition)  # created by a commit that completed after the storage listing
        if not unexplained_mdt:
            return from_mdt, counts
    counts["partitions_only_fs"] = len(only_fs)
    counts["partitions_only_mdt"] = len(unexplained_mdt)
    raise _CheckFailed(_Detail(counts, from_mdt).line(
        f"Compare Partitions Failed! partitions on storage but missing from the MDT: {only_fs}; "
        f"partitions in the MDT but missing from storage: {unexplained_mdt}; all {len(from_fs)} partitions on "
        f"storage: {from_fs}"))


class _PartitionChecks:
    """The per-partition checks of validateFilesInPartition."""

    def __init__(self, hudi: _Hudi, meta_client: Any, mdt: _Context, fs: _Context, cleaning: set) -> None:
        self.hudi = hudi
        self.meta_client = meta_client
        self.mdt = mdt
        self.fs = fs
        self.cleaning = cleaning
        self.committed_files: Dict[str, set] = {}
        self.partitions: List[str] = []
        self.column_stats_cache: Optional[Dict[str, List[Any]]] = None
        self.column_stats_columns: List[str] = []

    def run(self, name: str, partitions: List[str]) -> Tuple[None, Dict[str, int]]:
        self.partitions = partitions
        index = {"all-column-stats": "COLUMN_STATS", "bloom-filters": "BLOOM_FILTERS"}.get(name)
        if index is not None and not self.hudi.partition_available(self.meta_client, index):
            raise _NotEnabled(f"the metadata table has no {index.lower()} partition "
                              f"(hoodie.table.metadata.partitions: {sorted(self.meta_client.getTableConfig().getMetadataPartitions())})")
        method: Callable[[str, Dict[str, int], _Detail], None] = {
            "latest-file-slices": self._latest_file_slices,
            "latest-base-files": self._latest_base_files,
            "all-file-groups": self._all_file_groups,
            "all-column-stats": self._column_stats,
            "bloom-filters": self._bloom_filters,
        }[name]
        counts: Dict[str, int] = {"partitions": len(partitions), "partitions_failed": 0}
        detail = _Detail(counts)
        for partition in partitions:
            before = len(detail.lines) + detail.dropped
            method(partition, counts, detail)
            if len(detail.lines) + detail.dropped > before:
                counts["partitions_failed"] += 1
        if counts["partitions_failed"]:
            raise _CheckFailed(detail)
        return None, counts

    # -- file listing ------------------------------------------------------------------------------------------

    def _without_cleaning_slices(self, slices: List[Any]) -> List[Any]:
        if not self.cleaning:
            return slices
        return [s for s in slices if not (s.getBaseFile().isPresent() and s.getBaseFile().get().getFileName() in self.cleaning)]

    def _latest_base_file_names(self, partition: str) -> List[str]:
        return [f.getFileName() for f in self.fs.latest_base_files(partition) if f.getFileName() not in self.cleaning]

    def _latest_file_slices(self, partition: str, counts: Dict[str, int], detail: _Detail) -> None:
        mdt = self._without_cleaning_slices(self.mdt.latest_file_slices(partition))
        fs = self._without_cleaning_slices(self.fs.latest_file_slices(partition))
        self._compare_slices("latest file slices", partition, mdt, fs, counts, detail)

    def _all_file_groups(self, partition: str, counts: Dict[str, int], detail: _Detail) -> None:
        mdt = self._without_cleaning_slices(self.mdt.all_file_slices(partition))
        fs = self._without_cleaning_slices(self.fs.all_file_slices(partition))
        self._compare_slices("all file groups", partition, mdt, fs, counts, detail)

    def _latest_base_files(self, partition: str, counts: Dict[str, int], detail: _Detail) -> None:
        mdt = [f for f in self.mdt.latest_base_files(partition) if f.getFileName() not in self.cleaning]
        fs = [f for f in self.fs.latest_base_files(partition) if f.getFileName() not in self.cleaning]
        _add(counts, "base_files_mdt", len(mdt))
        _add(counts, "base_files_fs", len(fs))
        by_mdt = {f.getPath(): f for f in mdt}
        by_fs = {f.getPath(): f for f in fs}
        problems = []
        for path in sorted(set(by_fs) - set(by_mdt)):
            problems.append(f"only on storage: {_describe_base(by_fs[path])}")
        for path in sorted(set(by_mdt) - set(by_fs)):
            problems.append(f"only in the MDT: {_describe_base(by_mdt[path])}")
        for path in sorted(set(by_fs) & set(by_mdt)):
            if not by_fs[path].equals(by_mdt[path]) or by_fs[path].getFileSize() != by_mdt[path].getFileSize():
                problems.append(f"differs: storage {_describe_base(by_fs[path])} vs MDT {_describe_base(by_mdt[path])}")
        if len(mdt) != len(fs) and not problems:
            problems.append("same files but different counts (duplicates on one side)")
        _report(detail, "latest base files", partition, len(fs), len(mdt), problems)

    def _compare_slices(self, label: str, partition: str, mdt: List[Any], fs: List[Any],
                        counts: Dict[str, int], detail: _Detail) -> None:
        """validateFileSlices: same slices by file group, base instant and base file; committed log files equal."""
        _add(counts, "file_slices_mdt", len(mdt))
        _add(counts, "file_slices_fs", len(fs))

        def key(s: Any) -> str:  # FileSliceComparator
            return s.getPartitionPath() + s.getFileId() + s.getBaseInstantTime()

        by_mdt = {key(s): s for s in mdt}
        by_fs = {key(s): s for s in fs}
        problems = []
        for k in sorted(set(by_fs) - set(by_mdt)):
            problems.append(f"only on storage: {_describe_slice(self.hudi, by_fs[k])}")
        for k in sorted(set(by_mdt) - set(by_fs)):
            problems.append(f"only in the MDT: {_describe_slice(self.hudi, by_mdt[k])}")
        for k in sorted(set(by_fs) & set(by_mdt)):
            a, b = by_mdt[k], by_fs[k]
            same_size = _base_size(a) == _base_size(b)  # BaseFile.equals compares paths only
            if a.equals(b) and same_size:
                continue
            if not a.getFileGroupId().equals(b.getFileGroupId()) or a.getBaseInstantTime() != b.getBaseInstantTime() \
                    or not a.getBaseFile().equals(b.getBaseFile()) or not same_size:
                problems.append(f"base file differs: storage {_describe_slice(self.hudi, b)} vs MDT {_describe_slice(self.hudi, a)}")
                continue
            mismatch = self._committed_log_files_mismatch(a, b)
            if mismatch:
                problems.append(f"log files differ: {mismatch}; storage {_describe_slice(self.hudi, b)} vs MDT {_describe_slice(self.hudi, a)}")
        if len(mdt) != len(fs) and not problems:
            problems.append("same slices but different counts (duplicates on one side)")
        _report(detail, label, partition, len(fs), len(mdt), problems)

    def _committed_log_files_mismatch(self, mdt_slice: Any, fs_slice: Any) -> Optional[str]:
        """areFileSliceCommittedLogFilesMatching: log files only one side has must all be uncommitted."""
        in_mdt = {f.getPath().toString() for f in self.hudi.to_list(mdt_slice.getLogFiles())}
        in_fs = {f.getPath().toString() for f in self.hudi.to_list(fs_slice.getLogFiles())}
        for side, paths in (("MDT", in_mdt - in_fs), ("storage", in_fs - in_mdt)):
            committed = self._committed_log_file(paths)
            if committed:
                return f"only the {side} side has the committed log file {committed}"
        return None

    def _committed_log_file(self, paths: Iterable[str]) -> Optional[str]:
        """hasCommittedLogFiles: the first such log file whose first block's instant is committed, with why."""
        hudi = self.hudi
        storage = self.meta_client.getStorage()
        commits = self.meta_client.getCommitsTimeline()
        completed = commits.filterCompletedInstants()
        inflight = commits.filterInflights()
        for path in sorted(paths):
            reader = None
            try:
                schema = hudi.TableSchemaResolver.readSchemaFromLogFile(storage, hudi.StoragePath(path))
                if schema is None:
                    continue  # likely being written by an inflight instant
                reader = hudi.HoodieLogFormat.newReader(storage, hudi.HoodieLogFile(path), schema, False)
                if not reader.hasNext():
                    continue
                instant = reader.next().getLogBlockHeader().get(hudi.HeaderMetadataType.INSTANT_TIME)
                if completed.containsInstant(instant):
                    if instant not in self.committed_files:
                        found = [i for i in completed.getInstants() if hudi.time(i) == instant][0]
                        metadata = hudi.commit_metadata(completed, found)
                        self.committed_files[instant] = {s.getPath() for s in metadata.getWriteStats()}
                    if _relative(hudi.base_path(self.meta_client), path, hudi) in self.committed_files[instant]:
                        return f"{path} (committed in {instant}, active timeline)"
                elif completed.isBeforeTimelineStarts(instant):
                    return f"{path} (committed in {instant}, archived timeline)"
                elif inflight.containsInstant(instant):
                    continue
            except _JAVA_ERRORS as error:
                if not _is_io_exception(hudi, error):
                    raise
                continue  # unreadable: likely being written by an inflight instant, as the validator assumes
            finally:
                if reader is not None:
                    try:
                        reader.close()
                    except Exception:
                        pass
        return None

    # -- indexes -----------------------------------------------------------------------------------------------

    def _column_stats(self, partition: str, counts: Dict[str, int], detail: _Detail) -> None:
        """validateAllColumnStats: MDT column_stats records versus stats read from the Parquet footers."""
        hudi = self.hudi
        names = self._latest_base_file_names(partition)
        mdt_stats = self._mdt_column_stats(partition, names)
        utils = hudi.HoodieIOFactory.getIOFactory(self.meta_client.getStorage()).getFileFormatUtils(hudi.HoodieFileFormat.PARQUET)
        java_columns = hudi.java_list(self._indexed_columns())
        partition_path = hudi.FSUtils.constructAbsolutePath(hudi.base_path(self.meta_client), partition)
        fs_stats: List[Any] = []
        for name in names:
            fs_stats.extend(hudi.footer_column_stats(utils, self.meta_client.getStorage(), hudi.StoragePath(partition_path, name),
                                                     java_columns, self.meta_client, "column_stats"))
        _add(counts, "files", len(names))
        counts["columns"] = len(java_columns)
        _add(counts, "column_stats_mdt", len(mdt_stats))
        _add(counts, "column_stats_fs", len(fs_stats))

        def keyed(stats: List[Any]) -> Dict[Tuple[str, str], Any]:
            return {(s.getFilePath(), s.getColumnName()): s for s in stats}

        by_mdt, by_fs = keyed(mdt_stats), keyed(fs_stats)
        problems = []
        for file_name in sorted({k[0] for k in by_fs} | {k[0] for k in by_mdt}):
            only_fs = sorted(c for (f, c) in by_fs if f == file_name and (f, c) not in by_mdt)
            only_mdt = sorted(c for (f, c) in by_mdt if f == file_name and (f, c) not in by_fs)
            if only_fs:
                problems.append(f"{file_name}: no MDT column stats for columns {only_fs}")
            if only_mdt:
                problems.append(f"{file_name}: MDT has column stats the footer lacks for columns {only_mdt}")
            for (f, c) in sorted(k for k in by_fs if k[0] == file_name and k in by_mdt):
                mdt, fs = by_mdt[(f, c)], by_fs[(f, c)]
                if mdt.equals(fs):
                    continue
                decoded = None if hudi.v1 else _decode_wrapped_stats(hudi, mdt, fs)
                if decoded is not None and decoded.equals(fs):
                    _add(counts, "column_stats_decoded", 1)
                    continue
                problems.append(f"{file_name} column {c}: MDT {(decoded or mdt).toString()} vs footer {fs.toString()}")
        if len(mdt_stats) != len(fs_stats) and not problems:
            problems.append("same stats but different counts (duplicates on one side)")
        _report(detail, "column stats", partition, len(fs_stats), len(mdt_stats), problems)

    def _indexed_columns(self) -> List[str]:
        """The columns compared: all of the schema's in 0.15 (it indexes every column); in 1.x, which indexes a
        configured or capped subset, the column_stats index definition's source fields (.hoodie/.index_defs), or
        without one the columns the MDT holds stats for in any latest base file (then a column indexed for one
        file must be there, and right, for every file)."""
        if not self.hudi.v1:
            return self.fs.columns
        declared = self._declared_columns()
        wanted = set(declared) if declared is not None else set(self.column_stats_columns)
        return [c for c in self.fs.columns if c in wanted]

    def _declared_columns(self) -> Optional[List[str]]:
        metadata = self.meta_client.getIndexMetadata()
        if not metadata.isPresent():
            return None
        definition = metadata.get().getIndexDefinitions().get("column_stats")
        return None if definition is None else list(definition.getSourceFields())

    def _mdt_column_stats(self, partition: str, names: List[str]) -> List[Any]:
        """HoodieTableMetadata.getColumnStats per column, asked once for every partition's latest base files.

        The validator asks per partition and column; one look-up per column over all partitions returns the same
        records (keyed by partition and file) with a fraction of the MDT reads."""
        hudi = self.hudi
        if self.column_stats_cache is None:
            wanted = {p: self._latest_base_file_names(p) for p in self.partitions}
            pairs = hudi.java_list(hudi.Pair.of(p, n) for p, files in wanted.items() for n in files)
            cache: Dict[str, List[Any]] = {p: [] for p in wanted}
            if hudi.v11:  # 1.1 looks up many columns at once: one MDT read instead of one per column
                found = self.mdt.table_metadata.getColumnStats(pairs, hudi.java_list(self.mdt.columns))
                for entry in hudi.ArrayList(found.entrySet()):
                    for record in hudi.ArrayList(entry.getValue()):
                        cache.setdefault(entry.getKey().getKey(), []).append(hudi.column_range(record))
            else:
                for column in self.mdt.columns:
                    found = self.mdt.table_metadata.getColumnStats(pairs, column)
                    for entry in hudi.ArrayList(found.entrySet()):
                        stats = hudi.column_range(entry.getValue())
                        cache.setdefault(entry.getKey().getKey(), []).append(stats)
            self.column_stats_cache = cache
            self.column_stats_columns = sorted({s.getColumnName() for stats in cache.values() for s in stats})
        wanted_names = set(names)
        return [s for s in self.column_stats_cache.get(partition, []) if s.getFilePath() in wanted_names]

    def _bloom_filters(self, partition: str, counts: Dict[str, int], detail: _Detail) -> None:
        """validateBloomFilters: MDT bloom_filters records versus each base file's footer bloom filter."""
        hudi = self.hudi
        names = self._latest_base_file_names(partition)
        pairs = hudi.java_list(hudi.Pair.of(partition, n) for n in names)
        found = self.mdt.table_metadata.getBloomFilters(pairs)
        mdt: Dict[Tuple[str, str], str] = {}
        for entry in hudi.ArrayList(found.entrySet()):
            mdt[(entry.getKey().getKey(), entry.getKey().getValue())] = entry.getValue().serializeToString()
        config = hudi.HoodieConfig()
        # The validator passes this reader option through from its properties; its default applies here.
        if not hudi.v11:  # 1.1 dropped the option (one HFile reader left)
            config.setValue(hudi.HoodieReaderConfig.USE_NATIVE_HFILE_READER,
                            str(hudi.HoodieReaderConfig.USE_NATIVE_HFILE_READER.defaultValue()).lower())
        factory = hudi.HoodieSparkIOFactory.getHoodieSparkIOFactory(self.meta_client.getStorage()).getReaderFactory(hudi.HoodieRecordType.AVRO)
        partition_path = hudi.FSUtils.constructAbsolutePath(hudi.base_path(self.meta_client), partition).toString()
        fs: Dict[Tuple[str, str], str] = {}
        unreadable = []
        for name in names:
            reader = None
            try:
                reader = factory.getFileReader(config, hudi.StoragePath(partition_path, name))
                bloom = reader.readBloomFilter()
                if bloom is None:
                    unreadable.append(name)  # the validator logs and leaves the file out of the footer side
                else:
                    fs[(partition, name)] = bloom.serializeToString()
            finally:
                if reader is not None:
                    reader.close()
        _add(counts, "files", len(names))
        _add(counts, "bloom_filters_mdt", len(mdt))
        _add(counts, "bloom_filters_fs", len(fs))
        problems = []
        for key in sorted(set(fs) - set(mdt)):
            problems.append(f"{key[1]}: no MDT bloom filter (footer bloom {_digest(fs[key])})")
        for key in sorted(set(mdt) - set(fs)):
            why = " (the footer has no bloom filter)" if key[1] in unreadable else ""
            problems.append(f"{key[1]}: MDT bloom filter {_digest(mdt[key])} but none from the footer{why}")
        for key in sorted(set(fs) & set(mdt)):
            if fs[key] != mdt[key]:
                problems.append(f"{key[1]}: MDT bloom filter {_digest(mdt[key])} vs footer {_digest(fs[key])}")
        _report(detail, "bloom filters", partition, len(fs), len(mdt), problems)


class _NotEnabled(Exception):
    """The MDT has no partition for this index."""


def _check_record_index(hudi: _Hudi, spark: Any, meta_client: Any, base_path: str, latest: Optional[str],
                        name: str) -> Tuple[None, Dict[str, int]]:
    """validateRecordIndexCount / validateRecordIndexContent: Spark reads of the data table and of the MDT."""
    if not hudi.partition_available(meta_client, "RECORD_INDEX"):
        raise _NotEnabled("the metadata table has no record_index partition "
                          f"(hoodie.table.metadata.partitions: {sorted(meta_client.getTableConfig().getMetadataPartitions())})")
    from pyspark.sql import functions as F

    mdt_path = hudi.HoodieTableMetadata.getMetadataTableBasePath(base_path)
    data = spark.read.format("hudi").option("as.of.instant", latest).load(base_path)
    if name == "record-index-count":
        keys_in_table = data.select("_hoodie_record_key").count()
        index = spark.read.format("hudi").option("as.of.instant", latest).load(mdt_path)
        keys_in_index = index.select("key", "type").filter("type = 5").count()
        counts = {"keys_data_table": keys_in_table, "keys_record_index": keys_in_index}
        if keys_in_table != keys_in_index:
            raise _CheckFailed(_Detail(counts).line(
                f"Validation of record index count failed: {keys_in_index} entries from record index metadata, "
                f"{keys_in_table} keys from the data table as of {latest}"))
        return None, counts

    fields = ["partitionName", "fileIdEncoding", "fileIdHighBits", "fileIdLowBits", "fileIndex", "fileId", "instantTime"]
    index = (spark.read.format("hudi").load(mdt_path).filter("type = 5")
             .select(F.col("key"), *[F.col("recordIndexMetadata." + f).alias(f) for f in fields]))
    # Decode each distinct location once with Hudi's own function (a file group holds many keys).
    decoded = []
    for row in index.select(*fields).distinct().collect():
        location = hudi.HoodieTableMetadataUtil.getLocationFromRecordIndexInfo(
            row["partitionName"], row["fileIdEncoding"], row["fileIdHighBits"], row["fileIdLowBits"],
            row["fileIndex"], row["fileId"], hudi.jvm.java.lang.Long(row["instantTime"]))
        if latest is not None and hudi.newer(location.getInstantTime(), latest):
            continue  # written by a commit that completed after the data table was read: not a mismatch
        decoded.append(tuple(row[f] for f in fields) + (location.getPartitionPath(), location.getFileId()))
    locations = spark.createDataFrame(decoded, index.select(*fields).schema.add("rli_partition", "string").add("rli_file_id", "string"))
    join = None
    for f in fields:
        cond = index[f].eqNullSafe(locations[f])
        join = cond if join is None else join & cond
    from_index = index.join(locations, join).select("key", "rli_partition", "rli_file_id")

    table = data.select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")
    file_ids = [(r[0], hudi.FSUtils.getFileId(r[0])) for r in table.select("_hoodie_file_name").distinct().collect()]
    names = spark.createDataFrame(file_ids, "_hoodie_file_name string, fs_file_id string")
    from_table = table.join(names, "_hoodie_file_name").select(
        F.col("_hoodie_record_key").alias("key"), F.col("_hoodie_partition_path").alias("fs_partition"), "fs_file_id")
    joined = from_table.join(from_index, "key", "full_outer")
    wrong = joined.filter(~(F.col("fs_partition").eqNullSafe(F.col("rli_partition"))
                            & F.col("fs_file_id").eqNullSafe(F.col("rli_file_id"))))
    wrong_count = wrong.count()
    counts = {"keys_data_table": from_table.count(), "keys_record_index": from_index.count(), "keys_wrong": wrong_count}
    if wrong_count:
        detail = _Detail(counts).line(
            f"Validation of record index content failed: {wrong_count} keys (total {counts['keys_data_table']}) from "
            f"the data table have a wrong location in record index metadata (data table read as of {latest})")
        for row in wrong.orderBy("key").limit(_RECORD_INDEX_SAMPLES).collect():
            fs = f"({row['fs_partition']}, {row['fs_file_id']})" if row["fs_file_id"] is not None else "<empty>"
            rli = f"({row['rli_partition']}, {row['rli_file_id']})" if row["rli_file_id"] is not None else "<empty>"
            detail.line(f"record key {row['key']} -> storage: {fs}, record index: {rli}")
        raise _CheckFailed(detail)
    return None, counts


def _base_files_for_cleaning(hudi: _Hudi, meta_client: Any) -> set:
    """--skip-data-files-for-cleaning: base files an inflight clean plans to delete."""
    names = set()
    for instant in meta_client.getActiveTimeline().getCleanerTimeline().filterInflights().getInstants():
        requested = hudi.requested(meta_client, instant)
        plan = hudi.CleanerUtils.getCleanerPlan(meta_client, requested)
        for infos in hudi.ArrayList(plan.getFilePathsToBeDeletedPerPartition().values()):
            for info in hudi.ArrayList(infos):
                name = info.getFilePath().rsplit("/", 1)[-1]
                if hudi.HoodieFileFormat.BASE_FILE_EXTENSIONS.contains(hudi.FSUtils.getFileExtension(name)):
                    names.add(name)
    return names


# ---------------------------------------------------------------------------------------------------------------
# Helpers


def _run(result: Dict[str, Any], name: str, body: Callable[[], Tuple[Any, Dict[str, int]]]) -> Any:
    """Runs one check and records its outcome; returns the check's by-product (the partition list)."""
    started = time.time()
    value = None
    try:
        value, counts = body()
        result["checks"][name] = {"status": "passed", "details": "", "counts": counts}
    except _NotEnabled as reason:
        result["checks"][name] = {"status": "not-enabled", "details": str(reason), "counts": {}}
    except _CheckFailed as failure:
        result["checks"][name] = {"status": "failed", "details": failure.detail.text(), "counts": failure.detail.counts}
        value = failure.detail.value
    except _JAVA_ERRORS as error:
        message = _java_message(error)
        result["checks"][name] = {"status": "failed", "details": "error: " + message, "counts": {}}
        result["errors"].append(f"{name}: {message}")
    result["seconds"][name] = round(time.time() - started, 3)
    return value


def _finish(result: Dict[str, Any], started: float) -> Dict[str, Any]:
    result["seconds"]["total"] = round(time.time() - started, 3)
    result["ok"] = not result["errors"] and bool(result["checks"]) and all(
        c["status"] != "failed" for c in result["checks"].values())
    return result


def _report(detail: _Detail, label: str, partition: str, fs_count: int, mdt_count: int, problems: List[str]) -> None:
    if not problems:
        return
    detail.line(f"{label} differ in partition '{partition}': {fs_count} on storage, {mdt_count} in the MDT")
    for problem in problems:
        detail.line("  " + problem)


def _add(counts: Dict[str, int], key: str, n: int) -> None:
    counts[key] = counts.get(key, 0) + n


def _base_size(file_slice: Any) -> Optional[int]:
    base = file_slice.getBaseFile()
    return base.get().getFileSize() if base.isPresent() else None


def _describe_base(base_file: Any) -> str:
    return f"{base_file.getFileName()} ({base_file.getFileSize()} bytes)"


def _describe_slice(hudi: _Hudi, file_slice: Any) -> str:
    base = file_slice.getBaseFile()
    text = f"file group {file_slice.getFileId()} @ {file_slice.getBaseInstantTime()}: "
    text += _describe_base(base.get()) if base.isPresent() else "no base file"
    logs = [f"{f.getFileName()} ({f.getFileSize()} bytes)" for f in hudi.to_list(file_slice.getLogFiles())]
    return text + (f", logs {logs}" if logs else "")


def _decode_wrapped_stats(hudi: _Hudi, mdt: Any, footer: Any) -> Optional[Any]:
    """The MDT stats with date and decimal bounds decoded, or None when neither bound needs it.

    In 0.15, HoodieTableMetadataUtil.convertColumnStatsRecordToColumnRangeMetadata unwraps bounds with
    HoodieAvroUtils.unwrapAvroValueWrapper, which decodes DateWrapper and DecimalWrapper instances but returns the
    raw "value" of the GenericRecord wrappers that HoodieMetadataPayload actually holds: epoch days (Integer) for a
    date, the unscaled bytes (ByteBuffer, at DecimalWrapper's scale) for a decimal, while ParquetUtils gives
    java.sql.Date and BigDecimal. The 0.15 validator therefore reports every date and decimal column as a
    mismatch; Hudi 1.x decodes such wrappers (HUDI-8680: Date.valueOf(LocalDate.ofEpochDay(days)), and Avro's
    DecimalConversion with DecimalWrapper's schema). Here they are decoded the same way, a decimal then taken at
    the footer's scale when it is the same number, and the stats compared with equals again."""
    bounds = []
    decoded_any = False
    for getter in ("getMinValue", "getMaxValue"):
        value, reference = getattr(mdt, getter)(), getattr(footer, getter)()
        if value is None:
            bounds.append(None)
            continue
        reference_class = reference.getClass().getName() if isinstance(reference, JavaObject) else ""
        if isinstance(value, int) and not isinstance(value, bool) and reference_class in ("java.sql.Date", "java.time.LocalDate"):
            day = hudi.jvm.java.time.LocalDate.ofEpochDay(value)
            bounds.append(hudi.jvm.java.sql.Date.valueOf(day) if reference_class == "java.sql.Date" else day)
            decoded_any = True
        elif isinstance(value, JavaObject) and "ByteBuffer" in value.getClass().getName():
            schema = hudi.jvm.org.apache.hudi.avro.model.DecimalWrapper.getClassSchema().getField("value").schema()
            number = hudi.jvm.org.apache.avro.Conversions.DecimalConversion().fromBytes(value, schema, schema.getLogicalType())
            if isinstance(reference, decimal.Decimal) and number == reference:
                number = reference  # same number at the footer's scale (BigDecimal.equals compares scale too)
            bounds.append(number)
            decoded_any = True
        else:
            return None  # a bound of another type: left to the plain comparison
    if not decoded_any:
        return None
    return hudi.HoodieColumnRangeMetadata.create(
        mdt.getFilePath(), mdt.getColumnName(), bounds[0], bounds[1], hudi.jvm.java.lang.Long(mdt.getNullCount()),
        hudi.jvm.java.lang.Long(mdt.getValueCount()), hudi.jvm.java.lang.Long(mdt.getTotalSize()),
        hudi.jvm.java.lang.Long(mdt.getTotalUncompressedSize()))


def _digest(serialized: str) -> str:
    return f"sha256:{hashlib.sha256(serialized.encode()).hexdigest()[:16]} ({len(serialized)} chars)"


def _relative(base_path: str, path: str, hudi: _Hudi) -> str:
    base = hudi.StoragePath(base_path).getPathWithoutSchemeAndAuthority().toString()
    full = hudi.StoragePath(path).getPathWithoutSchemeAndAuthority().toString()
    rest = full[len(base):] if full.startswith(base) else full
    return rest[1:] if rest.startswith("/") else rest


def _qualify(base_path: str) -> str:
    """A bare local path becomes file:/abs/path, which is how Hadoop's local file system names listed files."""
    if base_path.startswith("file://"):
        base_path = "file:" + base_path[len("file://"):]
    if "://" in base_path or base_path.startswith("file:"):
        return base_path.rstrip("/")
    return "file:" + os.path.abspath(base_path)


def _wanted_checks(checks: Optional[Iterable[str]]) -> set:
    if checks is None:
        return set(CHECKS)
    if isinstance(checks, str):
        raise ValueError("checks must be a list of check names, not a string; e.g. checks=['latest-file-slices']")
    wanted = set()
    for check in checks:
        name = check[len("--validate-"):] if check.startswith("--validate-") else check
        name = name.replace("_", "-")
        if name not in CHECKS:
            raise ValueError(f"unknown check {check!r}; the checks are {', '.join(CHECKS)}")
        wanted.add(name)
    wanted.add("partitions")
    return wanted


def _java_throwable(error: Any) -> Any:
    """The Java exception behind a py4j or PySpark error, if there is one."""
    return getattr(error, "java_exception", None) or getattr(error, "_origin", None)


def _is_io_exception(hudi: "_Hudi", error: Any) -> bool:
    throwable = _java_throwable(error)
    return throwable is not None and bool(hudi.jvm.java.io.IOException._java_lang_class.isInstance(throwable))


def _java_class(error: Any) -> str:
    throwable = _java_throwable(error)
    try:
        return throwable.getClass().getName() if throwable is not None else type(error).__name__
    except Exception:
        return type(error).__name__


def _java_message(error: Any) -> str:
    """The Java exception and its causes, one line each, without the stack traces."""
    try:
        parts = []
        throwable = _java_throwable(error)
        if throwable is None:
            raise ValueError("no Java exception")
        while throwable is not None and len(parts) < 6:
            parts.append(throwable.toString())
            cause = throwable.getCause()
            throwable = None if cause is None or cause.equals(throwable) else cause
        return " <- caused by: ".join(parts)
    except Exception:
        return str(error).strip().splitlines()[0] if str(error).strip() else repr(error)


def _session(jar: str) -> Any:
    """A small local SparkSession with the Hudi bundle, as the tests use (UTC, no embedded timeline server)."""
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").appName("mdt-validator")
            .config("spark.jars", jar)
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
            .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
            .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
            .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
            .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
            .config("hoodie.embed.timeline.server", "false")
            .getOrCreate())


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Validate a Hudi 0.15 / 1.x table's metadata table against its files.")
    parser.add_argument("base_path")
    parser.add_argument("--checks", help="comma-separated check names (default: all): " + ",".join(CHECKS))
    parser.add_argument("--jar", default=os.environ.get("HUDI_SPARK_BUNDLE"),
                        help="hudi-spark3.5-bundle_2.12-0.15.0.jar (default: $HUDI_SPARK_BUNDLE)")
    parser.add_argument("--skip-data-files-for-cleaning", action="store_true")
    parser.add_argument("--output", help="also write the JSON result to this file (the JVM may print warnings on stdout)")
    args = parser.parse_args(argv)
    if not args.jar:
        parser.error("the Hudi Spark bundle is needed: pass --jar or set HUDI_SPARK_BUNDLE")
    spark = _session(args.jar)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        checks = args.checks.split(",") if args.checks else None
        result = validate_metadata_table(spark, args.base_path, checks,
                                         skip_data_files_for_cleaning=args.skip_data_files_for_cleaning)
    finally:
        spark.stop()
    text = json.dumps(result, indent=2)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    print(text)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
