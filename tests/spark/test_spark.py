"""``driftline spark``: the batch scan on PySpark (local[2]) gives ``scan``'s verdicts, capture by capture.

One SparkSession for the module (a JVM start is slow); the job under test finds it through
``SparkSession.builder.getOrCreate``.  Needs PySpark and Java 17 (``./dev test`` installs both).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.scancli import run
from tests.fixtures.scanwarcs import write_warc
from tests.fixtures.wacz import ON, collection_warc, when, write_wacz

pyspark = pytest.importorskip("pyspark", reason="driftline spark needs the 'spark' extra (PySpark)")

if shutil.which("java") is None:
    pytest.skip("driftline spark needs a Java 17 runtime (openjdk-17-jre-headless)", allow_module_level=True)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from watcher.spark.job import session

    s = session("local[2]", "driftline-tests")
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


Key = tuple[str, str, str]


def test_a_local_session_bounds_the_python_workers_sort(spark: Any) -> None:
    """The sort within partitions runs in the Python worker and spills past
    ``spark.python.worker.memory``: driftline's local session sets it to 256m (PySpark's 512m let a
    worker reach 360 MB on the gold), unless the caller's spark-submit arguments name it."""
    from watcher.spark.job import PYTHON_WORKER_MEMORY, PYTHON_WORKER_MEMORY_KEY

    assert spark.sparkContext.getConf().get(PYTHON_WORKER_MEMORY_KEY) == PYTHON_WORKER_MEMORY == "256m"


def jsonl_verdicts(path: Path) -> dict[Key, tuple[str, str]]:
    out: dict[Key, tuple[str, str]] = {}
    for line in path.read_text().splitlines():
        d = json.loads(line)["driftline"]
        key = (d["history"], d["capture_time"], d["url"])
        assert key not in out, f"{key} written twice"
        out[key] = (d["status"], d["change"])
    return out


def json_verdicts(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """OTMT JSON (scan's default format): (URI-T, URI-M) -> (status, change)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for uri_t, block in json.loads(path.read_text()).items():
        for uri_m, entry in block.items():
            if isinstance(entry, dict) and "driftline" in entry:
                out[(uri_t, uri_m)] = (entry["overall topic status"], entry["driftline"]["change"])
    return out


def test_spark_equals_scan_on_built_captures(spark: Any, tmp_path: Path) -> None:
    """Revisits (their originals in the other file), histories across files, non-documents, a WACZ
    given beside a WARC, a corrupt record: every verdict as scan's; the corrupt record an error
    row, the job done."""
    warcs = tmp_path / "crawl"
    warcs.mkdir()
    collection_warc(warcs)
    other = tmp_path / "other"
    other.mkdir()
    collection_warc(other, sites=2, captures=4, revisits=False, host="other")
    pkg = write_wacz(tmp_path / "other.wacz", sorted(other.glob("*.warc.gz")))
    broken = warcs / "crawl-3.warc.gz"  # a record, then garbage where the next record should be
    write_warc(broken, [("http://broken.example/", when(0), ON, {})])
    broken.write_bytes(broken.read_bytes() + b"Accept-Ranges: bytes\r\nnot a WARC record\r\n" * 20)
    inputs = [str(warcs), str(pkg)]

    assert run("scan", *inputs, "-f", "jsonl", "-o", str(tmp_path / "scan.jsonl"), "--no-progress",
               "--allow-missing") == 0
    # the WARCs through Hadoop's file system (binaryFiles), as hdfs:// and s3a:// inputs are read
    hadoop = [f"file:{warcs}/*.warc.gz", str(pkg)]
    assert run("spark", *hadoop, "-f", "jsonl", "-o", str(tmp_path / "spark.jsonl"), "--master", "local[2]") == 0
    scanned, sparked = jsonl_verdicts(tmp_path / "scan.jsonl"), jsonl_verdicts(tmp_path / "spark.jsonl")
    assert len(scanned) > 40
    assert sparked == scanned
    assert {"baseline", "off-topic"} <= {change for _, change in sparked.values()}

    counters = json.loads((tmp_path / "spark.jsonl.counters.json").read_text())
    assert counters["verdicts"] == len(scanned)
    assert counters["histories"] == len({k[0] for k in scanned})
    assert counters["skipped"]["text/css"] > 0  # the stylesheets, by kind
    assert counters["records read"] > counters["verdicts"]
    assert counters["errors"] == {"archive_unreadable": 1}  # the garbage after crawl-3's readable records
    errors = [json.loads(x) for x in (tmp_path / "spark.jsonl.errors.jsonl").read_text().splitlines()]
    assert [e["reason"] for e in errors] == ["archive_unreadable"] and "crawl-3" in errors[0]["source"]

    # Parquet: a column per verdict field, partitioned by capture year and month, the same verdicts
    assert run("spark", *inputs, "-f", "parquet", "-o", str(tmp_path / "out.parquet")) == 0
    assert sorted(p.name for p in (tmp_path / "out.parquet").iterdir() if p.is_dir()) == ["year=2020"]
    months = {f"month={int(k[1][5:7])}" for k in scanned}
    assert len(months) > 1 and {p.name for p in (tmp_path / "out.parquet" / "year=2020").iterdir()} == months
    df = spark.read.parquet(str(tmp_path / "out.parquet"))
    assert {"history", "capture_time", "status", "change", "measures", "reason", "year", "month"} <= set(df.columns)
    rows = df.select("history", "capture_time", "url", "status", "change").collect()
    from watcher.output.common import iso

    assert {(r.history, iso(r.capture_time), r.url): (r.status, r.change) for r in rows} == scanned
    df.createOrReplaceTempView("verdicts")
    off = spark.sql("SELECT count(*) AS n FROM verdicts WHERE year = 2020 AND status = 'off-topic'").first()
    assert off is not None and off.n == sum(1 for k, v in scanned.items() if k[1].startswith("2020")
                                            and v[0] == "off-topic")


@pytest.mark.shared
@pytest.mark.timeout(900)  # the session's gold scan may run first, inside this test's time
def test_spark_equals_scan_on_the_shared_gold(spark: Any, gold_dir: Path, gold_scan: Path, tmp_path: Path) -> None:
    out = tmp_path / "gold.json"
    assert run("spark", str(gold_dir), "-o", str(out), "--master", "local[2]") == 0
    scanned, sparked = json_verdicts(gold_scan), json_verdicts(out)
    assert len(scanned) > 2000
    assert sparked == scanned


@pytest.mark.shared
def test_spark_equals_scan_on_shared_warcs(spark: Any, shared_data: Path, tmp_path: Path) -> None:
    """Real crawls: revisits by record id, URL-agnostic revisits, a WARC with its CDXJ, a broken WARC."""
    w = shared_data / "warc"
    inputs = [str(w / n) for n in ("iana.warc.gz", "iana.cdxj", "example.warc.gz", "example-url-agnostic-orig.warc.gz",
                                    "example-url-agnostic-revisit.warc.gz", "dupes.warc.gz", "broken.warc",
                                    "5mementos.warc")]
    assert run("scan", *inputs, "-f", "jsonl", "-o", str(tmp_path / "scan.jsonl"), "--no-progress",
               "--allow-missing") == 0
    assert run("spark", *inputs, "-f", "jsonl", "-o", str(tmp_path / "spark.jsonl")) == 0
    scanned = jsonl_verdicts(tmp_path / "scan.jsonl")
    assert len(scanned) > 30  # most of iana.org's records are stylesheets, scripts and fonts
    assert jsonl_verdicts(tmp_path / "spark.jsonl") == scanned


@pytest.mark.kafka
async def test_backfill_gives_the_stream_the_archives_baseline(spark: Any, kafka_broker: Any, kafka_names: Any,
                                                               tmp_path: Path) -> None:
    """``--store``: a backfilled URL's first streamed capture is judged against the archive's baseline,
    a URL the archive does not hold starts its history (the control); the backfill is idempotent."""
    from consumers.app import ConsumerApp
    from consumers.client import produce, read_topic
    from tests.fixtures.kafka import heritrix_message, page_html, stream_config
    from tests.fixtures.kafka import write_warc as write_stream_warc
    from watcher.canonical import url_key
    from watcher.store import open_store

    archived, fresh = "http://www.rights.example.org/report", "http://news.example.net/page"
    archive = tmp_path / "archive"
    archive.mkdir()
    write_stream_warc(archive / "OLD-00001.warc.gz", [(archived, "20230101000000", page_html(1)),
                                                       (archived, "20230601000000", page_html(1, variant=1))])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(tmp_path / "live"),))
    db = cfg.store.path
    for _ in range(2):  # twice: the second run finds every history's state stored and changes nothing
        assert run("spark", str(archive), "-f", "jsonl", "-o", str(tmp_path / "archive.jsonl"), "--store", db) == 0
    counters = json.loads((tmp_path / "archive.jsonl.counters.json").read_text())
    assert counters["histories backfilled"] == 0 and counters["histories"] == 1
    store = open_store(cfg.store)
    try:
        state = store.get_state(url_key(archived, cfg.engine.canonical))
        assert state.baseline is not None and state.baseline.capture_time.year == 2023
    finally:
        store.close()

    (tmp_path / "live").mkdir()
    refs = write_stream_warc(tmp_path / "live" / "LIVE-00001.warc.gz", [(archived, "20240301000000",
                                                                         page_html(1, variant=2)),
                                                                        (fresh, "20240301000500", page_html(2))])
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    async with ConsumerApp(cfg) as app:
        await produce(boot, next(iter(k.input_topics)), [heritrix_message(r) for r in refs])
        verdicts = await read_topic(boot, k.results_topic, expect=2, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
    by_url = {v["value"]["url"]: v["value"] for v in verdicts}
    assert by_url[archived]["change"] != "baseline" and by_url[archived]["status"] == "on-topic"
    assert by_url[archived]["baseline_time"] == "2023-01-01T00:00:00Z"  # the archive's baseline
    assert by_url[fresh]["change"] == "baseline"  # nothing backfilled: its first capture starts it


@pytest.mark.postgres
def test_backfill_into_postgresql(spark: Any, postgres_dsn: str, tmp_path: Path) -> None:
    """The store at scale: every history's state in PostgreSQL, once however often the job runs."""
    from watcher.canonical import url_key
    from watcher.config import Config
    from watcher.spark.job import store_config
    from watcher.store import open_store

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    collection_warc(crawl, sites=2, captures=5)
    out = tmp_path / "out.jsonl"
    assert run("spark", str(crawl), "-f", "jsonl", "-o", str(out), "--store", postgres_dsn) == 0
    first = json.loads(out.with_name("out.jsonl.counters.json").read_text())
    assert first["histories backfilled"] == first["histories"] == 4
    assert run("spark", str(crawl), "-f", "jsonl", "-o", str(out), "--store", postgres_dsn) == 0
    assert json.loads(out.with_name("out.jsonl.counters.json").read_text())["histories backfilled"] == 0
    cfg = store_config(Config(), postgres_dsn)
    assert cfg.store.backend == "postgres"
    store = open_store(cfg.store)
    try:
        for url in ("http://site0.example/", "http://site1.example/articles/1.html"):
            state = store.get_state(url_key(url, cfg.engine.canonical))
            assert state.baseline is not None and state.baseline.capture_time.year == 2020
        last = store.recent_verdicts(url_key("http://site1.example/", cfg.engine.canonical), 1)
        assert last and last[0].status == "off-topic"  # site1's home page was parked at the end
    finally:
        store.close()


def test_spark_submit_runs_the_documented_command(tmp_path: Path) -> None:
    """The cluster path of docs/operations/spark.md: ``spark-submit`` (PySpark's own, as on a cluster's
    edge node) runs the file ``python -m watcher.spark --driver-file`` names, the master and resources
    given to spark-submit and driftline's arguments after the file; the verdicts are scan's."""
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    if not submit.exists():
        submit = Path(shutil.which("spark-submit") or submit)
    warcs = tmp_path / "crawl"
    warcs.mkdir()
    collection_warc(warcs, sites=2, captures=4, revisits=True)
    driver = subprocess.run([sys.executable, "-m", "watcher.spark", "--driver-file"], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert Path(driver).is_file()
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[2]),
                                                      os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([str(submit), "--master", "local[1]", "--conf", "spark.ui.enabled=false", driver,
                           str(warcs), "-f", "jsonl", "-o", str(tmp_path / "submitted.jsonl")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert run("scan", str(warcs), "-f", "jsonl", "-o", str(tmp_path / "scan.jsonl"), "--no-progress") == 0
    scanned = jsonl_verdicts(tmp_path / "scan.jsonl")
    assert len(scanned) >= 8 and jsonl_verdicts(tmp_path / "submitted.jsonl") == scanned
