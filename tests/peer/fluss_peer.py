#!/usr/bin/env python3
"""Independent Fluss peer client for the gateway's integration tests.

Uses the official `pyfluss` binding (import name `fluss`), not the gateway, so tests can
check what the gateway wrote (or write data the gateway must read).

Every command prints JSON on stdout: one document, or JSON lines for `scan`. On failure it
prints {"error": "...", "code": <fluss error code or null>, "type": "..."} on stdout and
exits 1 (2 for bad usage). See tests/peer/README.md for the value encoding.

    fluss_peer.py [--bootstrap HOST:PORT] [--sasl-user U --sasl-password P] [--timeout S] CMD ...
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import decimal
import json
import os
import re
import sys

import fluss
import pyarrow as pa

# ----------------------------------------------------------------------------- values


def to_json_value(v):
    """Python value from pyfluss -> JSON-friendly value (see README for the rules)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return str(v)  # NaN / Infinity are not JSON
        return v
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, dict):
        return {str(k): to_json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_json_value(x) for x in v]
    return str(v)


def _parse_datetime(s: str, tz: bool) -> dt.datetime:
    s = s.strip().replace(" ", "T", 1)
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    # datetime.fromisoformat in 3.9/3.10 wants exactly 3 or 6 fraction digits
    m = re.match(r"^(.*T\d\d:\d\d:\d\d)\.(\d+)(.*)$", s)
    if m:
        s = f"{m.group(1)}.{(m.group(2) + '000000')[:6]}{m.group(3)}"
    v = dt.datetime.fromisoformat(s)
    if tz and v.tzinfo is None:
        v = v.replace(tzinfo=dt.timezone.utc)
    if not tz and v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return v


def _parse_time(s: str) -> dt.time:
    m = re.match(r"^(\d\d:\d\d:\d\d)\.(\d+)$", s.strip())
    if m:
        s = f"{m.group(1)}.{(m.group(2) + '000000')[:6]}"
    return dt.time.fromisoformat(s)


def from_json_value(v, t: pa.DataType):
    """JSON value -> Python value pyfluss accepts for a column of Arrow type t."""
    if v is None:
        return None
    if pa.types.is_decimal(t):
        return decimal.Decimal(str(v))
    if pa.types.is_timestamp(t):
        if isinstance(v, (int, float)):  # epoch milliseconds
            v = dt.datetime.fromtimestamp(v / 1000, tz=dt.timezone.utc)
            return v if t.tz else v.replace(tzinfo=None)
        return _parse_datetime(str(v), tz=t.tz is not None)
    if pa.types.is_date(t):
        return dt.date.fromisoformat(str(v)) if isinstance(v, str) else dt.date.fromordinal(
            dt.date(1970, 1, 1).toordinal() + int(v))
    if pa.types.is_time(t):
        return _parse_time(str(v))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return base64.b64decode(v) if isinstance(v, str) else bytes(v)
    if pa.types.is_floating(t):
        return float(v)
    if pa.types.is_integer(t):
        return int(v)
    return v


def convert_row(obj: dict, schema: pa.Schema) -> dict:
    out = {}
    for k, v in obj.items():
        idx = schema.get_field_index(k)
        if idx < 0:
            raise UsageError(f"unknown column {k!r}; columns: {schema.names}")
        out[k] = from_json_value(v, schema.field(idx).type)
    return out


# ----------------------------------------------------------------------------- types

_SIMPLE_TYPES = {
    "boolean": pa.bool_(),
    "tinyint": pa.int8(),
    "smallint": pa.int16(),
    "int": pa.int32(),
    "integer": pa.int32(),
    "bigint": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
    "date": pa.date32(),
}


def _ts_unit(p: int) -> str:
    return "s" if p == 0 else "ms" if p <= 3 else "us" if p <= 6 else "ns"


def fluss_type_to_arrow(spec: str) -> tuple[pa.DataType, bool]:
    """'decimal(10,2) NOT NULL' -> (pa.decimal128(10, 2), False)."""
    s = spec.strip().lower()
    nullable = True
    if s.endswith("not null"):
        nullable, s = False, s[: -len("not null")].strip()
    m = re.match(r"^([a-z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$", s)
    if not m:
        raise UsageError(f"cannot parse type {spec!r}")
    name, a, b = m.group(1), m.group(2), m.group(3)
    if name in _SIMPLE_TYPES and a is None:
        return _SIMPLE_TYPES[name], nullable
    if name == "decimal":
        return pa.decimal128(int(a or 10), int(b or 0)), nullable
    if name in ("char", "varchar"):
        return pa.string(), nullable
    if name == "binary" and a is not None:
        return pa.binary(int(a)), nullable
    if name == "time":
        p = int(a) if a is not None else 0
        return (pa.time32("s" if p == 0 else "ms") if p <= 3 else pa.time64(_ts_unit(p))), nullable
    if name == "timestamp":
        return pa.timestamp(_ts_unit(int(a) if a is not None else 6)), nullable
    if name == "timestamp_ltz":
        return pa.timestamp(_ts_unit(int(a) if a is not None else 6), tz="UTC"), nullable
    raise UsageError(f"unsupported type {spec!r}")


# ----------------------------------------------------------------------------- commands


class UsageError(Exception):
    pass


def table_path(args) -> "fluss.TablePath":
    return fluss.TablePath(args.database, args.table)


async def cmd_list_databases(conn, args):
    return {"databases": list(await conn.get_admin().list_databases())}


async def cmd_database_exists(conn, args):
    return {"database": args.name, "exists": bool(await conn.get_admin().database_exists(args.name))}


async def cmd_create_database(conn, args):
    await conn.get_admin().create_database(args.name, ignore_if_exists=not args.fail_if_exists)
    return {"database": args.name, "created": True}


async def cmd_drop_database(conn, args):
    await conn.get_admin().drop_database(args.name, ignore_if_not_exists=True, cascade=True)
    return {"database": args.name, "dropped": True}


async def cmd_list_tables(conn, args):
    return {"database": args.database, "tables": list(await conn.get_admin().list_tables(args.database))}


async def cmd_table_exists(conn, args):
    exists = await conn.get_admin().table_exists(table_path(args))
    return {"database": args.database, "table": args.table, "exists": bool(exists)}


async def cmd_server_nodes(conn, args):
    nodes = await conn.get_admin().get_server_nodes()
    return {
        "nodes": [
            {"id": n.id, "type": n.server_type, "host": n.host, "port": n.port, "uid": n.uid}
            for n in nodes
        ]
    }


async def cmd_get_table(conn, args):
    info = await conn.get_admin().get_table_info(table_path(args))
    table = await conn.get_table(table_path(args))
    arrow = table.arrow_schema
    columns = []
    for name, ftype in info.get_schema().get_columns():
        field = arrow.field(name)
        columns.append({"name": name, "type": ftype, "nullable": field.nullable, "arrow_type": str(field.type)})
    return {
        "database": args.database,
        "table": args.table,
        "table_id": info.table_id,
        "schema_id": info.schema_id,
        "columns": columns,
        "primary_keys": list(info.get_primary_keys()),
        "bucket_keys": list(info.get_bucket_keys()),
        "partition_keys": list(info.get_partition_keys()),
        "num_buckets": info.num_buckets,
        "properties": dict(info.get_properties()),
        "custom_properties": dict(info.get_custom_properties()),
        "comment": info.comment,
        "created_time": info.created_time,
        "modified_time": info.modified_time,
    }


async def cmd_create_table(conn, args):
    cols = json.loads(args.schema)
    if isinstance(cols, dict):  # {"id": "int", ...}
        cols = [{"name": k, "type": v} for k, v in cols.items()]
    fields = []
    for c in cols:
        t, nullable = fluss_type_to_arrow(c["type"])
        fields.append(pa.field(c["name"], t, nullable=nullable and c.get("nullable", True)))
    pks = [k for k in (args.primary_key or "").split(",") if k]
    schema = fluss.Schema(pa.schema(fields), primary_keys=pks) if pks else fluss.Schema(pa.schema(fields))
    kw = {}
    if args.buckets is not None:
        kw["bucket_count"] = args.buckets
    if args.bucket_key:
        kw["bucket_keys"] = args.bucket_key.split(",")
    if args.partition_key:
        kw["partition_keys"] = args.partition_key.split(",")
    if args.properties:
        kw["properties"] = {str(k): str(v) for k, v in json.loads(args.properties).items()}
    if args.comment is not None:
        kw["comment"] = args.comment
    await conn.get_admin().create_table(
        table_path(args), fluss.TableDescriptor(schema, **kw), ignore_if_exists=not args.fail_if_exists
    )
    return {"database": args.database, "table": args.table, "created": True}


async def cmd_drop_table(conn, args):
    await conn.get_admin().drop_table(table_path(args), ignore_if_not_exists=True)
    return {"database": args.database, "table": args.table, "dropped": True}


async def cmd_lookup(conn, args):
    table = await conn.get_table(table_path(args))
    if not table.has_primary_key():
        raise UsageError(f"{args.database}.{args.table} has no primary key")
    key = convert_row(json.loads(args.key), table.arrow_schema)
    row = await table.new_lookup().create_lookuper().lookup(key)
    return {"found": row is not None, "row": to_json_value(row) if row is not None else None}


def _read_rows(args):
    rows = list(args.row or [])
    if args.rows_stdin:
        rows += [line for line in sys.stdin.read().splitlines() if line.strip()]
    if not rows:
        raise UsageError("give --row JSON (repeatable) or --rows-stdin")
    return [json.loads(r) for r in rows]


async def cmd_upsert(conn, args):
    table = await conn.get_table(table_path(args))
    writer = table.new_upsert().create_writer()
    rows = _read_rows(args)
    for r in rows:
        writer.upsert(convert_row(r, table.arrow_schema))
    await writer.flush()
    return {"upserted": len(rows)}


async def cmd_delete(conn, args):
    table = await conn.get_table(table_path(args))
    writer = table.new_upsert().create_writer()
    writer.delete(convert_row(json.loads(args.key), table.arrow_schema))
    await writer.flush()
    return {"deleted": 1}


async def cmd_append(conn, args):
    table = await conn.get_table(table_path(args))
    writer = table.new_append().create_writer()
    rows = _read_rows(args)
    for r in rows:
        writer.append(convert_row(r, table.arrow_schema))
    await writer.flush()
    return {"appended": len(rows)}


async def cmd_offsets(conn, args):
    admin = conn.get_admin()
    info = await admin.get_table_info(table_path(args))
    buckets = [args.bucket] if args.bucket is not None else list(range(info.num_buckets))
    earliest = await admin.list_offsets(table_path(args), buckets, fluss.OffsetSpec.earliest())
    latest = await admin.list_offsets(table_path(args), buckets, fluss.OffsetSpec.latest())
    return {"buckets": [{"bucket": b, "earliest": earliest[b], "latest": latest[b]} for b in buckets]}


async def cmd_scan(conn, args):
    """Change log from the earliest offset up to the end offset seen at start; JSON lines.

    A partitioned table is read partition by partition bucket (the partitions
    listed at start); each line then also carries "partition_id"."""
    admin = conn.get_admin()
    path = table_path(args)
    info = await admin.get_table_info(path)
    buckets = [args.bucket] if args.bucket is not None else list(range(info.num_buckets))
    # todo/end are keyed by (partition id or None, bucket).
    end = {}
    if info.is_partitioned():
        for p in await admin.list_partition_infos(path):
            latest = await admin.list_partition_offsets(path, p.partition_name, buckets, fluss.OffsetSpec.latest())
            for b in buckets:
                end[(p.partition_id, b)] = latest[b]
    else:
        latest = await admin.list_offsets(path, buckets, fluss.OffsetSpec.latest())
        for b in buckets:
            end[(None, b)] = latest[b]
    todo = {k: e for k, e in end.items() if e > 0}
    table = await conn.get_table(path)
    scanner = await table.new_scan().create_log_scanner()
    if todo and info.is_partitioned():
        scanner.subscribe_partition_buckets({k: fluss.EARLIEST_OFFSET for k in todo})
    elif todo:
        scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for (_, b) in todo})
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.scan_timeout
    while todo:
        if loop.time() > deadline:
            raise TimeoutError(f"scan did not reach end offsets {todo} in {args.scan_timeout}s")
        records = await scanner.poll(500)
        for tb, recs in records.items():
            k = (tb.partition_id, tb.bucket_id)
            for rec in sorted(recs, key=lambda r: r.offset):
                if k not in todo or rec.offset >= end[k]:
                    continue
                line = {
                    "bucket": tb.bucket_id,
                    "offset": rec.offset,
                    "timestamp": rec.timestamp,
                    "change_type": rec.change_type.short_string(),
                    "row": to_json_value(rec.row),
                }
                if tb.partition_id is not None:
                    line["partition_id"] = tb.partition_id
                print(json.dumps(line))
                if rec.offset + 1 >= end[k]:
                    del todo[k]
    sys.stdout.flush()
    return None


# ----------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fluss_peer.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bootstrap", default=os.environ.get("FLUSS_BOOTSTRAP", "127.0.0.1:19123"),
                   help="coordinator address (env FLUSS_BOOTSTRAP, default 127.0.0.1:19123)")
    p.add_argument("--sasl-user", default=os.environ.get("FLUSS_SASL_USER"))
    p.add_argument("--sasl-password", default=os.environ.get("FLUSS_SASL_PASSWORD"))
    p.add_argument("--timeout", type=float, default=60.0, help="overall timeout in seconds (60)")
    sub = p.add_subparsers(dest="cmd", required=True)

    def tbl(name, fn, help_):
        s = sub.add_parser(name, help=help_)
        s.add_argument("database")
        s.add_argument("table")
        s.set_defaults(fn=fn)
        return s

    s = sub.add_parser("list-databases"); s.set_defaults(fn=cmd_list_databases)
    s = sub.add_parser("server-nodes"); s.set_defaults(fn=cmd_server_nodes)
    s = sub.add_parser("database-exists"); s.add_argument("name"); s.set_defaults(fn=cmd_database_exists)
    s = sub.add_parser("create-database"); s.add_argument("name")
    s.add_argument("--fail-if-exists", action="store_true"); s.set_defaults(fn=cmd_create_database)
    s = sub.add_parser("drop-database", help="drop (cascade, ignore if missing)")
    s.add_argument("name"); s.set_defaults(fn=cmd_drop_database)
    s = sub.add_parser("list-tables"); s.add_argument("database"); s.set_defaults(fn=cmd_list_tables)
    tbl("table-exists", cmd_table_exists, "does the table exist")
    tbl("get-table", cmd_get_table, "table info and schema")
    s = tbl("create-table", cmd_create_table, "create a table")
    s.add_argument("--schema", required=True,
                   help='JSON: [{"name":"id","type":"int NOT NULL"},...] or {"id":"int",...}')
    s.add_argument("--primary-key", help="comma-separated")
    s.add_argument("--buckets", type=int)
    s.add_argument("--bucket-key", help="comma-separated")
    s.add_argument("--partition-key", help="comma-separated")
    s.add_argument("--properties", help="JSON object of table properties")
    s.add_argument("--comment")
    s.add_argument("--fail-if-exists", action="store_true")
    tbl("drop-table", cmd_drop_table, "drop (ignore if missing)")
    s = tbl("lookup", cmd_lookup, "primary-key lookup"); s.add_argument("--key", required=True, help="JSON object")
    for name, fn in (("upsert", cmd_upsert), ("append", cmd_append)):
        s = tbl(name, fn, f"{name} rows")
        s.add_argument("--row", action="append", help="JSON object (repeatable)")
        s.add_argument("--rows-stdin", action="store_true", help="read JSON lines from stdin")
    s = tbl("delete", cmd_delete, "delete by primary key"); s.add_argument("--key", required=True)
    s = tbl("offsets", cmd_offsets, "earliest/latest log offsets per bucket"); s.add_argument("--bucket", type=int)
    s = tbl("scan", cmd_scan, "log scan earliest..current end, JSON lines")
    s.add_argument("--bucket", type=int)
    s.add_argument("--scan-timeout", type=float, default=30.0)
    return p


async def run(args):
    conf = {"bootstrap.servers": args.bootstrap}
    if args.sasl_user:
        conf.update({
            "security.protocol": "sasl",
            "security.sasl.mechanism": "PLAIN",
            "security.sasl.username": args.sasl_user,
            "security.sasl.password": args.sasl_password or "",
        })
    conn = await fluss.FlussConnection.create(fluss.Config(conf))
    try:
        return await args.fn(conn, args)
    finally:
        closed = conn.close()  # a Future in pyfluss 1.0 (must be awaited), None in 0.1
        if closed is not None:
            await closed


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = asyncio.run(asyncio.wait_for(run(args), timeout=args.timeout))
    except UsageError as e:
        print(json.dumps({"error": str(e), "code": None, "type": "UsageError"}))
        return 2
    except Exception as e:  # noqa: BLE001 - report every failure as JSON
        code = getattr(e, "error_code", None)
        msg = getattr(e, "message", None) or str(e) or type(e).__name__
        print(json.dumps({"error": msg, "code": code, "type": type(e).__name__}))
        print(f"fluss_peer: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1
    if result is not None:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # pyfluss' tokio worker threads may still call into the interpreter (to resolve an
    # asyncio future) while it finalizes, which aborts the process (SIGABRT, exit 134) in
    # roughly 1 run out of 10. Skip interpreter finalization: everything is flushed.
    os._exit(rc)
