"""
Real Apache Hudi for the TypeScript tests: one SparkSession (Hudi 0.15's Spark bundle on Spark 3.5.1, local[2])
behind a JSON-lines protocol, plus reads by hudi-rs (PyPI `hudi`), a second, listing-based reader.

Started by test/helpers/hudi.ts with the toolchain's Python (infra/hudi-toolchain.mjs installs it) as a server on a
Unix socket, serving its clients one after another: each connection is one client (a HudiHarness of a test file)
with a SparkSession of its own (SparkSession.newSession(): its own SQL conf and `SET`s), and the catalog tables and
databases it created are dropped from the catalog (not from storage) when it leaves, so the next client's
`CREATE TABLE ours` finds no earlier `ours`. Starting Spark and warming up Hudi's code paths is most of a small test
file's time, so one server serves many files of a test phase (infra/run-tests.mjs) instead of one JVM per file.
Requests arrive one per line; each answer is one line. Whatever Spark or the JVM print goes to stdout/stderr (the
server's log), never into the protocol.

Request:  {"id": 1, "op": "write", ...}
Answer:   {"id": 1, "ok": true, "result": ...} or {"id": 1, "ok": false, "error": {"type", "message", "detail"}}
On connecting, the client first gets {"id": 0, "ok": true, "result": <ping>}.

Values cross in the project's canonical JSON (lib/engine/row-format.ts): decimals as exact strings with every scale
digit, timestamps as UTC ISO-8601 with milliseconds (microseconds when not zero), dates as YYYY-MM-DD, binary as
base64, 64-bit integers beyond 2^53 as strings, floats as the shortest decimal of the float32, NaN/Infinity as
strings, maps as objects keyed by the key's string form, structs as objects.

Configuration comes from the environment the client sets:
  HUDI_HARNESS_CONFIG  JSON: {"jars": [...], "timezone": "UTC", "workDir": "...", "s3": {...} | null, "conf": {...},
                       "socket": "<path>", "idleSeconds": N, "errorFile": "<path>" | null}
  The server exits when it has had no client for idleSeconds (0: as soon as its first client has gone); if Spark
  cannot start, it writes the error (an answer's JSON) to errorFile and exits.
  HUDI_HARNESS_JAVA_OPTIONS  extra JVM options for the driver (to try JIT or GC settings on the suite's time).
On stopping, the server logs the CPU its JVM used (user and system seconds), for comparing such settings.
"""
import base64
import datetime as dt
import decimal
import json
import math
import os
import signal
import socket
import struct
import sys
import threading
import time
import traceback

# Python-side conversions of Spark timestamps use the process time zone: make it UTC, whatever the JVM's is.
os.environ["TZ"] = "UTC"
time.tzset()

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

MAX_SAFE = 2**53 - 1


# ---------------------------------------------------------------------------------------------------------------
# Canonical JSON values
# ---------------------------------------------------------------------------------------------------------------

def _non_finite(value):
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _float32(value):
    if not math.isfinite(value):
        return _non_finite(value)
    single = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(1, 10):
        candidate = float(f"{single:.{digits}g}")
        if struct.unpack("f", struct.pack("f", candidate))[0] == single:
            return candidate
    return single


def _integer(value):
    return value if -MAX_SAFE <= value <= MAX_SAFE else str(value)


def _timestamp(value):
    """UTC ISO-8601 like JavaScript's toISOString, growing to microseconds when they are not zero."""
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    micros = value.microsecond
    fraction = f"{micros:06d}" if micros % 1000 else f"{micros // 1000:03d}"
    return (f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:"
            f"{value.second:02d}.{fraction}Z")


def _key_string(value):
    return value if isinstance(value, str) else json.dumps(value)


def spark_to_json(value, data_type):
    """A value collected from Spark, in the canonical JSON form of its Spark type."""
    if value is None:
        return None
    if isinstance(data_type, T.DecimalType):
        return f"{value:.{data_type.scale}f}"
    if isinstance(data_type, (T.TimestampType, T.TimestampNTZType)):
        return _timestamp(value)
    if isinstance(data_type, T.DateType):
        return value.isoformat()
    if isinstance(data_type, T.BinaryType):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(data_type, T.FloatType):
        return _float32(value)
    if isinstance(data_type, T.DoubleType):
        return value if math.isfinite(value) else _non_finite(value)
    if isinstance(data_type, T.LongType):
        return _integer(value)
    if isinstance(data_type, T.ArrayType):
        return [spark_to_json(item, data_type.elementType) for item in value]
    if isinstance(data_type, T.MapType):
        return {_key_string(spark_to_json(k, data_type.keyType)): spark_to_json(v, data_type.valueType)
                for k, v in value.items()}
    if isinstance(data_type, T.StructType):
        return {field.name: spark_to_json(value[field.name], field.dataType) for field in data_type.fields}
    return value


def json_to_spark(value, data_type):
    """A canonical JSON value as the Python value Spark's createDataFrame wants for the Spark type."""
    if value is None:
        return None
    if isinstance(data_type, T.DecimalType):
        return decimal.Decimal(str(value))
    if isinstance(data_type, T.TimestampType):
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if isinstance(data_type, T.TimestampNTZType):
        return dt.datetime.fromisoformat(str(value).replace("Z", ""))
    if isinstance(data_type, T.DateType):
        return dt.date.fromisoformat(value)
    if isinstance(data_type, T.BinaryType):
        return bytearray(base64.b64decode(value))
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return float(value)
    if isinstance(data_type, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
        return int(value)
    if isinstance(data_type, T.ArrayType):
        return [json_to_spark(item, data_type.elementType) for item in value]
    if isinstance(data_type, T.MapType):
        return {json_to_spark(_parse_key(k, data_type.keyType), data_type.keyType): json_to_spark(v, data_type.valueType)
                for k, v in value.items()}
    if isinstance(data_type, T.StructType):
        return tuple(json_to_spark(value.get(field.name), field.dataType) for field in data_type.fields)
    return value


def _parse_key(key, key_type):
    if isinstance(key_type, (T.StringType, T.DecimalType, T.DateType, T.TimestampType, T.BinaryType)):
        return key
    return json.loads(key)


def arrow_to_json(value, arrow_type):
    """A value from pyarrow's to_pylist, in the canonical JSON form of its Arrow type (for hudi-rs reads)."""
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_decimal(arrow_type):
        return f"{value:.{arrow_type.scale}f}"
    if pa.types.is_timestamp(arrow_type):
        return _timestamp(value)
    if pa.types.is_date(arrow_type):
        return value.isoformat()
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type) or pa.types.is_fixed_size_binary(arrow_type):
        return base64.b64encode(bytes(value)).decode("ascii")
    if pa.types.is_float32(arrow_type):
        return _float32(value)
    if pa.types.is_floating(arrow_type):
        return value if math.isfinite(value) else _non_finite(value)
    if pa.types.is_integer(arrow_type):
        return _integer(value)
    if pa.types.is_map(arrow_type):
        return {_key_string(arrow_to_json(k, arrow_type.key_type)): arrow_to_json(v, arrow_type.item_type) for k, v in value}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return [arrow_to_json(item, arrow_type.value_type) for item in value]
    if pa.types.is_struct(arrow_type):
        return {arrow_type.field(i).name: arrow_to_json(value.get(arrow_type.field(i).name), arrow_type.field(i).type)
                for i in range(arrow_type.num_fields)}
    return value


# ---------------------------------------------------------------------------------------------------------------
# Spark
# ---------------------------------------------------------------------------------------------------------------

def spark_path(path):
    """Table locations as Spark's Hadoop file systems name them: s3://bucket/p → s3a://bucket/p."""
    return "s3a://" + path[len("s3://"):] if path.startswith("s3://") else path


def make_spark(config):
    """The SparkSession every test talks to: Hudi's Spark bundle, local[2], UTC session time, a given JVM zone."""
    timezone = config.get("timezone", "UTC")
    work = config["workDir"]
    java_options = " ".join([
        # The client JIT only: the servers run many short Spark jobs on tiny tables, whose code C2 would spend more CPU
        # compiling than its faster code saves (compare the JVM CPU run-tests reports, HUDI_HARNESS_JAVA_OPTIONS below).
        "-XX:TieredStopAtLevel=1",
        f"-Duser.timezone={timezone}",
        f"-Dderby.system.home={work}",
        # The HBase-shaded HFile code behind Hudi's metadata table reaches into java.nio on Java 17.
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED",
        "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
        os.environ.get("HUDI_HARNESS_JAVA_OPTIONS", ""),
    ])
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-serverless-interop")
        .config("spark.jars", ",".join(config["jars"]))
        # The same jars on the driver's own class path (local mode: the only JVM). With spark.jars alone Hudi's classes
        # live in Spark's MutableURLClassLoader, which ForkJoin pool threads (Hudi's parallel streams) do not see:
        # Avro then decodes a metadata table's delete block as a GenericData.Record and the cast to
        # HoodieDeleteRecord fails, depending on which thread ran the read.
        .config("spark.driver.extraClassPath", ":".join(config["jars"]))
        .config("spark.driver.memory", config.get("driverMemory", "1536m"))
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
        .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", os.path.join(work, "warehouse"))
        .config("spark.local.dir", os.path.join(work, "spark-local"))
    )
    s3 = config.get("s3")
    if s3:
        for key, value in {
            "fs.s3a.endpoint": s3["endpoint"],
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": "true" if s3["endpoint"].startswith("https") else "false",
            "fs.s3a.access.key": s3["accessKeyId"],
            "fs.s3a.secret.key": s3["secretAccessKey"],
            "fs.s3a.endpoint.region": s3.get("region", "us-east-1"),
            "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            "fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            "fs.s3a.change.detection.mode": "none",
        }.items():
            builder = builder.config(f"spark.hadoop.{key}", value)
    for key, value in (config.get("conf") or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(config.get("logLevel", "WARN"))
    return spark


def rows_of(df, include_meta=True):
    fields = [f for f in df.schema.fields if include_meta or not f.name.startswith("_hoodie_")]
    rows = [{f.name: spark_to_json(row[f.name], f.dataType) for f in fields} for row in df.collect()]
    return {"columns": [f.name for f in fields], "rows": rows}


class Harness:
    """One client's SparkSession: a new session of the server's SparkContext (its own SQL conf and `SET`s)."""

    def __init__(self, config, spark):
        self.config = config
        self.spark = spark.newSession()
        # Java values a client keeps between requests (jvm_eval's "keep"), gone with the client.
        self.kept = {}

    # -- operations ------------------------------------------------------------------------------------------

    def op_ping(self, request):
        jvm = self.spark._jvm
        return {
            "spark": self.spark.version,
            "hudiJars": [os.path.basename(jar) for jar in self.config["jars"] if "hudi" in os.path.basename(jar)],
            "tableVersion": int(jvm.org.apache.hudi.common.table.HoodieTableVersion.current().versionCode()),
            "jvmTimezone": str(jvm.java.util.TimeZone.getDefault().getID()),
        }

    def op_write(self, request):
        """A datasource write: rows (canonical JSON) of a Spark DDL schema, with Hudi options."""
        schema = T._parse_datatype_string(request["schema"])
        data = [json_to_spark(row, schema) for row in request["rows"]]
        df = self.spark.createDataFrame(data, schema)
        writer = df.write.format("hudi").options(**request.get("options", {})).mode(request.get("mode", "append"))
        writer.save(spark_path(request["path"]))
        return {"rows": len(data)}

    def op_read(self, request):
        """A snapshot (or as-of) read with the given read options, every column unless meta is false."""
        reader = self.spark.read.format("hudi").options(**request.get("options", {}))
        df = reader.load(spark_path(request["path"]))
        if request.get("where"):
            df = df.where(request["where"])
        return rows_of(df, include_meta=request.get("meta", True))

    def op_scan_files(self, request):
        """A filtered read, run to the end; the rows it returned and the files its scan read (the scan's numFiles
        metric, after Hudi's file index pruned partitions and, with data skipping on, files)."""
        reader = self.spark.read.format("hudi").options(**request.get("options", {}))
        df = reader.load(spark_path(request["path"])).where(request["where"])
        rows = df.collect()
        plan = df._jdf.queryExecution().executedPlan()
        scans = []

        def walk(node):
            if node.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
                walk(node.executedPlan())
                return
            metrics = node.metrics()
            if metrics.contains("numFiles"):
                scans.append({"node": node.nodeName(), "numFiles": int(metrics.apply("numFiles").value())})
            children = node.children()
            for index in range(children.size()):
                walk(children.apply(index))

        walk(plan)
        return {"rows": len(rows), "scans": scans, "numFiles": sum(scan["numFiles"] for scan in scans)}

    def op_read_many(self, request):
        """Snapshot reads of many tables of one schema in one Spark job (a union tagged by table index): the crash
        harness reads dozens of tiny tables, where a job per table would cost seconds each."""
        from functools import reduce
        from pyspark.sql import functions as F

        columns = request["columns"]
        frames = [
            self.spark.read.format("hudi").options(**request.get("options", {})).load(spark_path(path))
            .select(*columns).withColumn("__table", F.lit(index))
            for index, path in enumerate(request["paths"])
        ]
        union = reduce(lambda a, b: a.unionByName(b), frames)
        fields = [f for f in union.schema.fields if f.name != "__table"]
        tables = [[] for _ in request["paths"]]
        for row in union.collect():
            tables[row["__table"]].append({f.name: spark_to_json(row[f.name], f.dataType) for f in fields})
        return {"columns": [f.name for f in fields], "tables": tables}

    def op_sql(self, request):
        """Any Spark SQL statement (CALL procedures included); its result rows."""
        df = self.spark.sql(request["statement"])
        return rows_of(df)

    def op_hudi_rs_read(self, request):
        """A snapshot (or as-of) read by hudi-rs, which lists the table rather than using the metadata table."""
        import pyarrow as pa
        from hudi import HudiReadOptions, HudiTableBuilder

        builder = HudiTableBuilder.from_base_uri(request["path"])
        for key, value in (request.get("storageOptions") or {}).items():
            builder = builder.with_storage_option(key, value)
        table = builder.build()
        options = HudiReadOptions()
        if request.get("asOf"):
            options = options.with_as_of_timestamp(request["asOf"])
        batches = table.read(options)
        arrow = pa.Table.from_batches(batches) if batches else None
        if arrow is None:
            return {"columns": [], "rows": []}
        include_meta = request.get("meta", True)
        fields = [f for f in arrow.schema if include_meta or not f.name.startswith("_hoodie_")]
        columns = {f.name: arrow.column(f.name).to_pylist() for f in fields}
        rows = [{f.name: arrow_to_json(columns[f.name][i], f.type) for f in fields} for i in range(arrow.num_rows)]
        return {"columns": [f.name for f in fields], "rows": rows}

    def op_validate_metadata_table(self, request):
        """HoodieMetadataTableValidator's checks, run by Hudi's own classes (test/hudi/mdt_validator.py)."""
        from mdt_validator import validate_metadata_table

        return validate_metadata_table(self.spark, spark_path(request["path"]), request.get("checks"))

    def op_avro_schema(self, request):
        """The Avro schema Hudi compiled into one of its model classes, e.g. HoodieCleanerPlan."""
        jvm = self.spark._jvm
        # Through py4j's class lookup (the context class loader, which sees spark.jars), not Class.forName,
        # whose caller's loader does not.
        model = getattr(jvm.org.apache.hudi.avro.model, request["name"])
        return json.loads(str(model.getClassSchema().toString()))

    def op_hfile_write(self, request):
        """An HFile written by Hudi's own HoodieAvroHFileWriter (shaded HBase writer, bloom filter, min/max keys),
        configured as HoodieAvroFileWriterFactory does, but with a chosen block size, compression and (through
        the Hadoop conf) HBase's index chunk size, so tests get multi-block and multi-level files."""
        jvm = self.spark._jvm
        conf = jvm.org.apache.hadoop.conf.Configuration()
        if request.get("indexBlockMaxSize"):
            conf.setInt("hfile.index.block.max.size", int(request["indexBlockMaxSize"]))
        schema = jvm.org.apache.avro.Schema.Parser().parse(request["schema"])
        algorithm = jvm.org.apache.hudi.org.apache.hadoop.hbase.io.compress.Compression.Algorithm.valueOf(
            request.get("compression", "GZ"))
        bloom = jvm.org.apache.hudi.common.bloom.BloomFilterFactory.createBloomFilter(
            60000, 0.000000001, 100000, "DYNAMIC_V0")
        config = jvm.org.apache.hudi.io.hadoop.HoodieHFileConfig(
            conf, algorithm, int(request.get("blockSize", 1024 * 1024)), 120 * 1024 * 1024, "key", False, False, True,
            bloom, jvm.org.apache.hudi.io.storage.HoodieHBaseKVComparator())
        writer = jvm.org.apache.hudi.io.hadoop.HoodieAvroHFileWriter(
            "000", jvm.org.apache.hudi.storage.StoragePath(request["path"]), config, schema,
            jvm.org.apache.hudi.common.engine.LocalTaskContextSupplier(), False)
        utils = jvm.org.apache.hudi.avro.HoodieAvroUtils
        for record in request["records"]:
            writer.writeAvro(record["key"], utils.bytesToAvro(base64.b64decode(record["value"]), schema))
        writer.close()
        return {"records": len(request["records"])}

    def op_hfile_read(self, request):
        """Read an HFile with one of Hudi 0.15's readers: "native" (hudi-io's HoodieNativeAvroHFileReader, what the
        metadata table uses by default) or "hbase" (HoodieHBaseAvroHFileReader, the shaded HBase reader, which
        also verifies block checksums). With fromBytes, the reader gets the file's content as a byte array, the
        way log-block HFiles are read. Records come back as Avro binary (base64) with the key field restored."""
        jvm = self.spark._jvm
        conf = jvm.org.apache.hadoop.conf.Configuration()
        storage_conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(conf)
        path = jvm.org.apache.hudi.storage.StoragePath(request["path"])
        storage = jvm.org.apache.hudi.storage.hadoop.HoodieHadoopStorage(request["path"], storage_conf)
        empty = jvm.org.apache.hudi.common.util.Option.empty()
        content = None
        if request.get("fromBytes"):
            with open(request["path"], "rb") as handle:
                content = handle.read()
        if request.get("reader", "native") == "native":
            cls = jvm.org.apache.hudi.io.storage.HoodieNativeAvroHFileReader
            reader = cls(storage, content, empty) if content is not None else cls(storage, path, empty)
        else:
            cls = jvm.org.apache.hudi.io.hadoop.HoodieHBaseAvroHFileReader
            reader = cls(storage_conf, path, storage, content, empty) if content is not None else cls(storage_conf, path, empty)
        try:
            schema = reader.getSchema()
            utils = jvm.org.apache.hudi.avro.HoodieAvroUtils

            def drain(iterator, convert):
                items = []
                try:
                    while iterator.hasNext():
                        items.append(convert(iterator.next()))
                finally:
                    iterator.close()
                return items

            encode = lambda record: base64.b64encode(bytes(utils.avroToBytes(record))).decode("ascii")  # noqa: E731
            result = {
                "schema": str(schema.toString()),
                "totalRecords": int(reader.getTotalRecords()),
                "records": drain(reader.getIndexedRecordIterator(schema, schema), encode),
            }
            if request.get("bloom", False):
                min_max = reader.readMinMaxRecordKeys()
                bloom = reader.readBloomFilter()
                result["minMaxKeys"] = [str(min_max[0]), str(min_max[1])]
                result["bloomTypeCode"] = str(bloom.getBloomFilterTypeCode().toString())
                result["bloomContains"] = [bool(bloom.mightContain(key)) for key in request.get("bloomKeys", [])]
            if request.get("lookups") is not None:
                keys = jvm.java.util.ArrayList()
                for key in sorted(request["lookups"]):
                    keys.add(key)
                result["lookups"] = drain(reader.getIndexedRecordsByKeysIterator(keys, schema), encode)
            return result
        finally:
            reader.close()

    def op_hfile_read_io(self, request):
        """Read an HFile's bytes with hudi-io's HFileReaderImpl, the reader Hudi 1.x's metadata table opens base files
        and log-block HFiles with (0.15 has it too): the entry count, the file info `schema`, and every entry's key
        (the row key as text) and value (base64)."""
        jvm = self.spark._jvm
        with open(request["path"], "rb") as handle:
            content = bytearray(handle.read())
        stream = jvm.org.apache.hudi.io.ByteArraySeekableDataInputStream(
            jvm.org.apache.hudi.common.util.io.ByteBufferBackedInputStream(content))
        reader = jvm.org.apache.hudi.io.hfile.HFileReaderImpl(stream, len(content))
        try:
            reader.initializeMetadata()
            schema = reader.getMetaInfo(jvm.org.apache.hudi.io.hfile.UTF8StringKey("schema"))
            entries = []
            if reader.seekTo():
                while True:
                    kv = reader.getKeyValue().get()
                    offset = kv.getValueOffset()
                    value = jvm.java.util.Arrays.copyOfRange(kv.getBytes(), offset, offset + kv.getValueLength())
                    entries.append({"key": str(kv.getKey().getContentInString()),
                                    "value": base64.b64encode(bytes(value)).decode("ascii")})
                    if not reader.next():
                        break
            return {
                "count": int(reader.getNumKeyValueEntries()),
                "schema": bytes(schema.get()).decode("utf-8") if schema.isPresent() else None,
                "entries": entries,
            }
        finally:
            reader.close()

    def op_jvm_static(self, request):
        """Call a public static Java method with JSON-able arguments (generators of golden vectors use it)."""
        expression = {"static": f"{request['class']}.{request['method']}", "args": request.get("args", [])}
        return _java_to_json(self._evaluate(expression))

    def op_jvm_eval(self, request):
        """Evaluate a small Java expression tree (see _evaluate) and return its value as JSON."""
        return _java_to_json(self._evaluate(request["expression"]))

    def _evaluate(self, value):
        """
        A JSON value as a Java argument. Objects are typed values or calls:
          {"long": "123"}, {"double": "NaN" | "1.5"}, {"float": "1.05"} (a float32 widened to double),
          {"byte": -1} (for byte parameters), {"bytes": "<base64>"} (byte[]), {"byteArrays": ["<base64>", ...]} (byte[][]),
          {"longArray": ["1", "2"]} (long[]),
          {"static": "pkg.Class.method", "args": [...]}, {"call": "method", "on": <expression>, "args": [...]},
          {"new": "pkg.Class", "args": [...]}, {"keep": "name", "value": <expression>} (kept for later requests, and
          returned), {"kept": "name"}.
        Other values pass as they are (py4j turns small ints into int, larger ones into long).
        """
        if isinstance(value, list):
            return [self._evaluate(item) for item in value]
        if not isinstance(value, dict):
            return value
        jvm = self.spark._jvm
        if "long" in value:
            return int(value["long"])
        if "double" in value:
            return float(value["double"])
        if "float" in value:
            return struct.unpack("f", struct.pack("f", float(value["float"])))[0]
        if "byte" in value:
            return int(value["byte"])
        if "bytes" in value:
            return bytearray(base64.b64decode(value["bytes"]))
        if "byteArrays" in value:
            rows = [bytearray(base64.b64decode(item)) for item in value["byteArrays"]]
            array = self.spark.sparkContext._gateway.new_array(jvm.byte, len(rows), 0)
            for index, row in enumerate(rows):
                array[index] = row
            return array
        if "longArray" in value:
            items = value["longArray"]
            array = self.spark.sparkContext._gateway.new_array(jvm.long, len(items))
            for index, item in enumerate(items):
                array[index] = int(item)
            return array
        if "kept" in value:
            if value["kept"] not in self.kept:
                raise ValueError(f"no Java value kept as {value['kept']}")
            return self.kept[value["kept"]]
        if "keep" in value:
            self.kept[value["keep"]] = self._evaluate(value["value"])
            return self.kept[value["keep"]]
        args = [self._evaluate(arg) for arg in value.get("args", [])]
        if "new" in value:
            target = jvm
            for part in value["new"].split("."):
                target = getattr(target, part)
            return target(*args)
        if "static" in value:
            *class_parts, method = value["static"].split(".")
            target = jvm
            for part in class_parts:
                target = getattr(target, part)
            return getattr(target, method)(*args)
        if "call" in value:
            return getattr(self._evaluate(value["on"]), value["call"])(*args)
        raise ValueError(f"not a Java expression: {json.dumps(value)[:200]}")


def _java_to_json(value):
    if value is None or isinstance(value, (bool, float, str)):
        return value
    if isinstance(value, int):
        return _integer(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    try:
        return [_java_to_json(item) for item in value]
    except TypeError:
        return str(value)


def _describe(error):
    """One error for the client: a Java exception's class and message chain, else Python's."""
    from py4j.protocol import Py4JJavaError

    if isinstance(error, Py4JJavaError):
        java = error.java_exception
        chain = []
        cause = java
        while cause is not None and len(chain) < 8:
            chain.append(f"{cause.getClass().getName()}: {cause.getMessage()}")
            cause = cause.getCause()
        return {"type": java.getClass().getName(), "message": chain[0], "detail": "\n".join(chain[1:])}
    return {"type": type(error).__name__, "message": str(error).split("\n")[0], "detail": traceback.format_exc(limit=3)}


def _answer(harness, request):
    handler = getattr(harness, f"op_{request.get('op')}", None)
    try:
        # This client's session is the JVM thread's active one (SparkSession.active is what Hudi's procedures use),
        # whatever session another client's request last made active.
        harness.spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(harness.spark._jsparkSession)
        if handler is None:
            raise ValueError(f"unknown harness operation {request.get('op')!r}")
        started = time.time()
        result = handler(request)
        return {"id": request.get("id"), "ok": True, "result": result, "seconds": round(time.time() - started, 3)}
    except Exception as error:  # noqa: BLE001 - every failure goes back to the test as data
        return {"id": request.get("id"), "ok": False, "error": _describe(error)}


class Server:
    def __init__(self, config):
        self.config = config
        self.spark = make_spark(config)
        self.lock = threading.Lock()
        self.clients = 0
        self.served = 0
        self.idle_since = time.monotonic()

    def catalog_names(self):
        """The catalog's databases and tables, as (database, table) pairs (table None for the database itself)."""
        catalog = self.spark._jsparkSession.sessionState().catalog().externalCatalog()
        as_list = self.spark._jvm.scala.collection.JavaConverters.seqAsJavaList
        names = set()
        for database in as_list(catalog.listDatabases()):
            names.add((database, None))
            for table in as_list(catalog.listTables(database)):
                names.add((database, table))
        return names

    def forget_tables(self, before):
        """Drop what a client added to the shared catalog: entries only, a table's files stay where they are."""
        catalog = self.spark._jsparkSession.sessionState().catalog().externalCatalog()
        added = self.catalog_names() - before
        for database, table in added:
            if table is not None and (database, None) in before:
                catalog.dropTable(database, table, True, False)
        for database, table in added:
            if table is None:
                catalog.dropDatabase(database, True, True)

    def client(self, connection, number):
        """One client's requests, in order, on its own thread (py4j pins it to a JVM thread of its own)."""
        with connection, connection.makefile("r", encoding="utf-8") as requests, \
                connection.makefile("w", encoding="utf-8") as out:

            def send(answer):
                out.write(json.dumps(answer) + "\n")
                out.flush()

            before = None
            try:
                try:
                    before = self.catalog_names()
                    harness = Harness(self.config, self.spark)
                    send({"id": 0, "ok": True, "result": harness.op_ping({})})
                except Exception as error:  # noqa: BLE001 - reported to the client, which fails the test with it
                    send({"id": 0, "ok": False, "error": _describe(error)})
                    return
                for line in requests:
                    if not line.strip():
                        continue
                    request = json.loads(line)
                    if request.get("op") == "shutdown":
                        send({"id": request.get("id"), "ok": True, "result": None})
                        break
                    send(_answer(harness, request))
            except OSError:
                pass  # the client went away (its test process ended): its session goes with it
            finally:
                try:
                    if before is not None:
                        self.forget_tables(before)
                except Exception:  # noqa: BLE001 - logged; the next client's CREATE TABLE names the leftover
                    traceback.print_exc()
                with self.lock:
                    self.clients -= 1
                    self.idle_since = time.monotonic()

    def serve(self, path):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Bound under a temporary name and renamed: the socket's path appears only once it accepts connections.
        pending = f"{path}.{os.getpid()}"
        listener.bind(pending)
        listener.listen(64)
        os.rename(pending, path)
        listener.settimeout(0.5)
        idle_seconds = float(self.config.get("idleSeconds", 0))
        try:
            while True:
                try:
                    connection, _ = listener.accept()
                except socket.timeout:
                    with self.lock:
                        idle = self.clients == 0 and time.monotonic() - self.idle_since >= idle_seconds
                        if idle and (idle_seconds > 0 or self.served > 0):
                            break
                    continue
                connection.settimeout(None)
                with self.lock:
                    self.clients += 1
                    self.served += 1
                    number = self.served
                threading.Thread(target=self.client, args=(connection, number), daemon=True).start()
        finally:
            # Gone from the path first, so a client arriving now starts a new server rather than waiting on this one.
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            listener.close()


def serve():
    config = json.loads(os.environ["HUDI_HARNESS_CONFIG"])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    # SIGTERM (the test runner ending its phase) stops Spark through the finally below, not mid-write to the log.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server = Server(config)
    except Exception as error:  # noqa: BLE001 - written for the clients, which fail their tests with it
        if config.get("errorFile"):
            with open(config["errorFile"], "w", encoding="utf-8") as out:
                out.write(json.dumps({"id": 0, "ok": False, "error": _describe(error)}) + "\n")
        traceback.print_exc()
        sys.exit(1)
    try:
        server.serve(config["socket"])
    finally:
        cpu = jvm_cpu_seconds(server.spark)
        server.spark.stop()
        if cpu is not None:
            print(f"harness: the JVM used {cpu[0]:.1f} s user and {cpu[1]:.1f} s system CPU, "
                  f"serving {server.served} client(s)", flush=True)


def jvm_cpu_seconds(spark):
    """The driver JVM's user and system CPU seconds so far (from /proc), or None where that cannot be read."""
    try:
        pid = spark.sparkContext._gateway.proc.pid
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return int(fields[11]) / ticks, int(fields[12]) / ticks
    except Exception:  # noqa: BLE001 - a report only
        return None


if __name__ == "__main__":
    serve()
