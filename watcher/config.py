"""One frozen, validated configuration object.

Loaded from ``config.yaml`` (the documented defaults shipped with the
project), then overridden by environment variables named
``DRIFTLINE__SECTION__KEY`` (double underscores separate nesting levels, e.g.
``DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS=broker:9092``).  Values given in the
environment are parsed as YAML scalars, so ``true``, ``3`` and ``[a, b]``
work.  Units are part of the names (``timeout_s``, ``max_bytes``).

Secrets (passwords, a DSN, tokens) are :class:`pydantic.SecretStr`: they
print as ``**********`` in reprs, logs and dumps and are read with
``.get_secret_value()`` only where a connection is made.  Environment values
of secret keys are taken verbatim (a password ``yes`` or ``0123`` is not
YAML), and validation errors never quote the input (pydantic would).
"""

from __future__ import annotations

import codecs
import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator

from .actuators.settings import ActuatorConfig as ActuatorConfig
from .confbase import Frozen
from .config_problems import FieldProblemError, describe
from .config_problems import line as problem_line
from .crawlfollow.settings import CrawlLogConfig
from .errors import ConfigError
from .model import ChangeClass, TopicStatus
from .profiles.names import ProfileName
from .review.settings import ReviewConfig
from .seeds.settings import SeedsConfig

ENV_PREFIX = "DRIFTLINE__"
DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "config.yaml"


_Frozen = Frozen


class CanonicalConfig(_Frozen):
    """How captures of one resource are grouped into one history."""

    lowercase_host: bool = True
    strip_www: bool = True
    strip_default_port: bool = True
    strip_trailing_slash: bool = True
    sort_query: bool = True
    ignore_scheme: bool = True
    strip_fragment: bool = True
    drop_query_params: tuple[str, ...] = (
        "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "gclid", "fbclid",
        "sessionid", "phpsessid", "jsessionid", "sid",
    )


class ExtractConfig(_Frozen):
    max_bytes: int = Field(default=8_000_000, ge=1)
    max_decompress_ratio: float = Field(default=200.0, gt=1.0)
    # Boilerplate removal before measuring: "auto" removes it where the question is about an article
    # (the text profile; a deep-page seed under the collection profile), not from a home page, whose
    # menus carry the site (removal measured to hurt there); why: ``main_content_for``.
    main_content: bool | Literal["auto"] = "auto"
    remove_banners: bool = True
    fallback_encoding: str = "windows-1252"
    pdf_max_pages: int = Field(default=200, ge=1)

    def main_content_for(self, auto: bool) -> bool:
        """Whether fingerprints are taken from the page's main content: the configured answer, else
        (``auto``) the profile's for the seed (``Profile.main_content``: the text profile's and a
        deep-page seed's, whose article is the point; a home page stands for the site, menus and all)."""
        return self.main_content if isinstance(self.main_content, bool) else auto

    @field_validator("main_content", mode="before")
    @classmethod
    def _main_content(cls, v: object) -> object:
        # One problem for one key: the union's two members would each report their own.  (The
        # environment's "true" arrives as a YAML scalar, already a bool.)
        if isinstance(v, bool) or v == "auto":
            return v
        raise ValueError("expected auto (the text profile only), true or false")

    @field_validator("fallback_encoding")
    @classmethod
    def _encoding(cls, v: str) -> str:
        try:
            codecs.lookup(v)
        except LookupError:
            raise ValueError("expected a text encoding Python knows (e.g. windows-1252, utf-8)") from None
        return v


class TokenConfig(_Frozen):
    """What a fingerprint holds.  The same fingerprint is scored in batch, in
    the stream and by ``compare``, and kept as the baseline, so these settings
    decide both the scores and the bytes per URL (see README, "Causal state")."""

    stop_words: bool = True
    # The N most frequent words of the language's stop list (0: the whole list); see watcher/lang.py.
    stop_words_max: int = Field(default=200, ge=0, le=100_000)
    stemming: bool = False
    shingle_size: int = Field(default=4, ge=1, le=16)
    minhash_permutations: int = Field(default=128, ge=16, le=1024)
    # The most frequent content terms kept per capture (cosine, tfintersection, Jaccard, Sørensen read
    # them).  64 keeps a baseline under 2 kB; on the gold data 64 and all terms rank captures alike.
    max_terms: int = Field(default=64, ge=20, le=100_000)
    keep_shingles: bool = False  # exact shingle sets (exact containment); ~8 bytes per word
    keep_tokens: bool = False  # the word sequence (levenshtein); ~8 bytes per word
    keep_text: bool = False  # the extracted text (for inspection only)


class PolicyConfig(_Frozen):
    """How per-measure statuses combine into the capture's status."""

    kind: Literal["any", "all", "k-of-n", "weighted"] = "any"
    k: int = Field(default=2, ge=1)
    weights: Mapping[str, Annotated[float, Field(ge=0)]] = Field(default_factory=dict)
    weighted_threshold: float = Field(default=0.5, gt=0, le=1)


class BaselineConfig(_Frozen):
    policy: Literal["first", "first-valid", "pinned", "rolling"] = "first"
    pinned: Mapping[str, str] = Field(default_factory=dict)  # history -> 14-digit timestamp

    @field_validator("pinned")
    @classmethod
    def _timestamps(cls, v: Mapping[str, str]) -> Mapping[str, str]:
        # Compared as text with the capture's 14-digit time: any other form would never match.
        for history, ts in v.items():
            if not (isinstance(ts, str) and len(ts) == 14 and ts.isdigit()):
                raise FieldProblemError(history, ts, "expected a 14-digit timestamp (YYYYMMDDhhmmss, UTC)")
        return v



DEFAULT_VOTING: dict[str, float | None] = {"tfintersection": 1.0, "wordcount": -0.95}
DEFAULT_REPORTED: tuple[str, ...] = ("cosine", "containment", "resemblance", "jaccard", "sorensen", "bytecount",
                                     "tf_simhash", "title", "doi", "language")


class DoiThresholds(_Frozen):
    """The ``doi`` profile's own thresholds (``engine.doi``): part of the engine, read through the profile
    (``Case.params``), so batch, stream, ``compare``, the DOI monitor and review judge with the same values
    and no caller has to pass them."""

    title_min_similarity: float = 0.80  # rapidfuzz token-set ratio (0..1) for "the title still matches"
    abstract_min_containment: float = 0.95  # below this share of its 4-word shingles kept, the abstract was edited
    paragraph_min_containment: float = 0.60  # below this a baseline paragraph counts as changed
    main_min_containment: float = 0.35  # below this (with the record lost) the work counts as replaced


class EngineConfig(_Frozen):
    """The engine.  ``measures`` vote on the overall status (name -> threshold,
    ``null`` for the measure's default); ``report_measures`` are scored and
    shown with their own status but do not vote."""

    measures: Mapping[str, float | None] = Field(default_factory=lambda: dict(DEFAULT_VOTING))
    report_measures: tuple[str, ...] = DEFAULT_REPORTED
    policy: PolicyConfig = PolicyConfig()
    baseline: BaselineConfig = BaselineConfig()
    extract: ExtractConfig = ExtractConfig()
    tokens: TokenConfig = TokenConfig()
    canonical: CanonicalConfig = CanonicalConfig()
    page_kinds: bool = True
    site_identity: bool = True
    # Deep pages stand for their subject: a different article of the same site is off topic (profiles/subject.py).
    page_subject: bool = True
    # The question a verdict answers: collection (on the curator's topic?), text (is the text still there?),
    # doi (is the scholarly record still at the endpoint?).  Per input topic: kafka.topic_profiles.
    profile: ProfileName = "collection"
    doi: DoiThresholds = DoiThresholds()  # the doi profile's thresholds (read through it: Case.params)

    @model_validator(mode="after")
    def _k_of_n(self) -> EngineConfig:
        # k above the number of voting measures would quietly mean "all": refuse it.
        n = len(self.measures)
        if self.policy.kind == "k-of-n" and self.policy.k > n:
            raise FieldProblemError("policy.k", self.policy.k, f"expected at most {n}, the number of voting measures "
                                                          f"(engine.measures / --measures)")
        return self


class StoreConfig(_Frozen):
    backend: Literal["sqlite", "memory", "postgres"] = "sqlite"
    path: str = "driftline.db"
    # PostgreSQL connection string (backend "postgres": one store shared by consumers on several machines),
    # e.g. "postgresql://driftline@db.example.org/driftline"; set it from DRIFTLINE__STORE__DSN to keep a
    # password out of config.yaml.  A secret: never logged (describe_dsn names database and host only).
    dsn: SecretStr | None = None
    # Verdicts kept per history (the newest; older ones are pruned, their ids remembered for idempotence).
    history_limit: int = Field(default=1000, ge=1)
    # How long (by arrival) a capture's compact fingerprint is kept next to its verdict, so that a capture
    # arriving late (older than the baseline) can re-score the captures after it.  What a fingerprint
    # holds is set under engine.tokens; the state a URL needs for scoring is its baseline (~1.5 kB).
    rescore_window_s: float = Field(default=86_400.0, ge=0)


class ScanConfig(_Frozen):
    format: Literal["json", "csv", "jsonl", "summary"] = "json"
    progress: bool = True
    workers: int = Field(default=0, ge=0)  # 0 = one per core
    timemap_timeout_s: float = Field(default=30.0, gt=0)
    # Pages of a paged TimeMap (or TimeMaps of a TimeMap index) read per input, the first included.
    timemap_max_pages: int = Field(default=100, ge=1)
    follow_redirects: int = Field(default=5, ge=0)
    # Accept inputs or captures that could not be read (missing WARC behind a CDX, a memento that
    # could not be fetched, a cut record): they are still reported as errors, but the exit code is 0.
    allow_missing: bool = False


class KafkaConfig(_Frozen):
    bootstrap_servers: str | None = None
    client_id: str = "driftline"
    group_id: str = "driftline"
    # The DOI monitor's capture events (doi.events_topic) are an input like a crawler's, judged under the doi profile.
    input_topics: Mapping[str, str] = Field(default_factory=lambda: {"heritrix-crawl-log": "auto",
                                                                     "driftline-doi-captures": "driftline"})
    # input topic -> profile (collection | text | doi); topics not named use engine.profile
    topic_profiles: Mapping[str, ProfileName] = Field(default_factory=lambda: {"driftline-doi-captures": "doi"})
    results_topic: str = "driftline-verdicts"
    alerts_topic: str = "driftline-alerts"
    recommendations_topic: str = "driftline-recommendations"
    dead_letter_topic: str = "driftline-dead-letter"
    max_in_flight: int = Field(default=64, ge=1)
    max_batch: int = Field(default=100, ge=1)
    # Tansu completes a first join after session_timeout/2: keep it short
    session_timeout_ms: int = Field(default=10_000, ge=1)
    request_timeout_ms: int = Field(default=30_000, ge=1)
    embedded_broker: bool = True
    embedded_port: int = Field(default=19092, ge=1, le=65535)
    partitions: int = Field(default=6, ge=1)
    # Re-key: Heritrix's feed is unkeyed, so one URL's captures land on any
    # partition; a router re-produces each raw event to keyed_topic with the
    # canonical URL key, so all captures of one history are scored in order.
    rekey: bool = True
    keyed_topic: str = "driftline-events-keyed"
    # The stages this process runs: both, or one (routers and scorers as processes or pods of their own).
    stage: Literal["all", "router", "scorer"] = "all"
    create_topics: bool = True  # create missing topics (and re-create them after a memory broker restarts)
    topic_check_interval_s: float = Field(default=5.0, gt=0)
    # Cap of the exponential backoff between attempts to reach an unreachable broker at start-up.
    connect_retry_max_s: float = Field(default=30.0, gt=0)
    idempotent_producer: bool = True  # falls back to acks=all alone when the broker refuses (Tansu 0.6)
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    heartbeat_interval_ms: int = Field(default=3_000, ge=1)
    rebalance_timeout_ms: int = Field(default=30_000, ge=1)
    max_poll_interval_ms: int = Field(default=300_000, ge=1)
    metadata_max_age_ms: int = Field(default=30_000, ge=1)
    commit_interval_ms: int = Field(default=1_000, ge=1)
    shutdown_timeout_s: float = Field(default=20.0, gt=0)
    # threads running engine/store calls; the engine is not thread-safe, so 1
    score_threads: int = Field(default=1, ge=1)
    # a store outage is retried this long (the partition waits), then dead-lettered
    store_retry_s: float = Field(default=300.0, ge=0)
    # A produce the broker refuses (not a transient error) is retried this long, then dead-lettered.
    publish_refused_retry_s: float = Field(default=60.0, ge=0)
    client_log_interval_s: float = Field(default=10.0, ge=0)  # aiokafka log lines: one per message per interval
    # Secured brokers (every aiokafka client gets these; the embedded broker is always PLAINTEXT).
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: SecretStr | None = None  # set it from DRIFTLINE__KAFKA__SASL_PLAIN_PASSWORD
    ssl_cafile: str | None = None  # CA bundle the broker's certificate must chain to (default: system CAs)
    ssl_certfile: str | None = None  # client certificate (mutual TLS)
    ssl_keyfile: str | None = None
    ssl_key_password: SecretStr | None = None  # DRIFTLINE__KAFKA__SSL_KEY_PASSWORD
    ssl_check_hostname: bool = True


class LiveFetchConfig(_Frozen):
    timeout_s: float = Field(default=20.0, gt=0)
    max_bytes: int = Field(default=20_000_000, ge=1)
    max_redirects: int = Field(default=5, ge=0)
    per_host_concurrency: int = Field(default=2, ge=1)
    per_host_delay_s: float = Field(default=1.0, ge=0)
    user_agent: str = "driftline/0.1 (+https://github.com/driftline/driftline; content-drift watcher)"


class AcquireConfig(_Frozen):
    warc_dirs: tuple[str, ...] = ()  # where WARC files named by events are looked up (plus doi.warc_dir for DOI events)
    warc_http_base: str | None = None
    replay_base: str | None = None
    live: LiveFetchConfig = LiveFetchConfig()
    allow_addresses: tuple[str, ...] = ()  # CIDRs admitted despite being private/loopback
    order: tuple[Literal["warc", "replay", "live"], ...] = ("warc", "replay", "live")
    warc_max_bytes: int = Field(default=50_000_000, ge=1)  # cap on one WARC record as stored (compressed)

    @field_validator("allow_addresses")
    @classmethod
    def _cidrs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in v:
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                raise ValueError(f"expected IP networks in CIDR form (e.g. 10.0.0.0/8); {cidr!r} is not one") from None
        return v

    @field_validator("order")
    @classmethod
    def _order(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        # Empty is allowed: events then need inline content.
        if len(set(v)) != len(v):
            raise ValueError("expected distinct sources among warc, replay, live (each at most once)")
        return v


class RenderConfig(_Frozen):
    enabled: bool = True
    executable_path: str = "/usr/bin/chromium"
    pages: int = Field(default=2, ge=1)
    timeout_s: float = Field(default=20.0, gt=0)
    hosts: tuple[str, ...] = ()
    url_patterns: tuple[str, ...] = ()
    auto: bool = True
    auto_max_words: int = Field(default=30, ge=0)
    auto_min_scripts: int = Field(default=3, ge=0)
    settle_s: float = Field(default=2.0, ge=0)  # after "load", wait up to this long for the network to go idle
    # Render script-built captures from a WARC or a raw replay too, every subresource taken from the
    # archive (the capture's WARC file, then acquire.replay_base), never from the live web.
    archived: bool = True
    archive_index_files: int = Field(default=4, ge=1)  # WARC file indexes kept in memory for that
    # Chromium's sandbox: "auto" keeps it on where the platform allows (as root: Chromium runs as
    # sandbox_user through a setpriv wrapper), else --no-sandbox with a warning; "on" fails instead; "off".
    sandbox: Literal["auto", "on", "off"] = "auto"
    sandbox_user: str = "nobody"


class MetricsConfig(_Frozen):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=9308, ge=1, le=65535)
    # Consumer lag is read from the group's committed offsets and the topics'
    # end offsets this often, for every partition (owned or not).
    lag_interval_s: float = Field(default=10.0, gt=0)
    # Distinct crawl jobs/collections that get their own label value; later
    # ones are counted as "other" (bounded cardinality).
    max_collections: int = Field(default=20, ge=0, le=1000)
    # Crawl jobs/collections known in advance: their series exist (at 0) from
    # the start, so rate() sees their first verdict too.
    collections: tuple[str, ...] = ()


class RecommendConfig(_Frozen):
    """Crawl-stop recommendations (watcher/recommend.py)."""

    consecutive_off_topic: int = Field(default=3, ge=1)
    seeds_only: bool = True
    # Verdict statuses that count as "off topic" for a run; "empty" and "error"
    # captures (a timeout, an empty body) break a run by default.
    off_topic_statuses: tuple[str, ...] = ("off-topic",)

    @field_validator("off_topic_statuses")
    @classmethod
    def _statuses(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        known = get_args(TopicStatus)
        if not v or any(s not in known for s in v):
            raise ValueError(f"expected a non-empty list of verdict statuses among {', '.join(known)}")
        return v


class AlertConfig(_Frozen):
    """Which verdicts are alerts (the rest are verdicts and metrics only).

    By profile: a curator wants off-topic captures, not every home page that
    showed new stories (on the gold data 64 % of all captures are "drifted");
    a citation checker wants drifted text too; the DOI monitor wants the record
    replaced, gone or moved.  ``topics`` overrides the profile's list for an
    input topic.  A profile not named in ``changes`` alerts on its own default (its ``alert_classes``)."""

    changes: Mapping[ProfileName, tuple[ChangeClass, ...]] = Field(default_factory=dict)
    topics: Mapping[str, tuple[ChangeClass, ...]] = Field(default_factory=dict)

    def alerts_on(self, profile: str, topic: str | None) -> frozenset[str]:
        if topic is not None and topic in self.topics:
            return frozenset(self.topics[topic])
        if profile in self.changes:
            return frozenset(self.changes[profile])
        from .profiles import get  # the profile itself: not needed to load the configuration

        return frozenset(get(profile).alert_classes)


class EventsConfig(_Frozen):
    skip_schemes: tuple[str, ...] = ("dns", "whois", "screenshot", "thumbnail")
    skip_paths: tuple[str, ...] = ("/robots.txt",)
    accept_status: tuple[int, int] = (200, 399)
    document_mimetypes: tuple[str, ...] = ("text/html", "application/xhtml+xml", "text/plain", "application/pdf")
    skip_annotations: tuple[str, ...] = ()

    @field_validator("accept_status")
    @classmethod
    def _status_range(cls, v: tuple[int, int]) -> tuple[int, int]:
        if not 100 <= v[0] <= v[1] <= 599:
            raise ValueError("expected [low, high] HTTP status codes with 100 <= low <= high <= 599")
        return v


class DoiConfig(_Frozen):
    """The DOI landing-page monitor (watcher/doi/)."""

    resolver_url: str = "https://doi.org/"  # DOI resolver; its handle API is <resolver_url>api/handles/<doi>
    crossref_url: str = "https://api.crossref.org"  # Crossref REST API base (import)
    datacite_url: str = "https://api.datacite.org"  # DataCite REST API base (import)
    # Contact address: sent as mailto= to Crossref (its "polite pool") and in the User-Agent of every request.
    mailto: str | None = None
    user_agent: str = "driftline-doi/0.1 (+https://github.com/driftline/driftline; DOI landing-page monitor)"
    import_rows: int = Field(default=500, ge=1, le=1000)  # records per API page (Crossref rows, DataCite page[size])
    import_timeout_s: float = 60.0  # per API request
    import_max_records: int = Field(default=0, ge=0)  # stop an import after this many records (0 = all)
    default_interval_s: int = Field(default=86_400, ge=1)  # check interval of a DOI that names none
    group_intervals_s: Mapping[str, int] = Field(default_factory=dict)  # tag -> interval for DOIs naming none
    jobstore_url: str | None = None  # APScheduler job store (SQLAlchemy URL); default: beside the store
    jitter_s: float = 300.0  # random delay added to each scheduled check (spreads load, APScheduler jitter)
    misfire_grace_s: int = 86_400  # a check missed while stopped still runs (once) when this late at most
    max_concurrent_checks: int = Field(default=64, ge=1)  # checks in flight on this machine
    judge_processes: int = Field(default=0, ge=0)  # worker processes that fingerprint pages (0 = a thread)
    per_host_concurrency: int = Field(default=2, ge=1)  # requests in flight per host
    per_host_delay_s: float = 1.0  # minimum time between request starts per host
    timeout_s: float = 30.0  # one check's whole redirect chain and body
    max_redirects: int = 10  # HTTP redirects followed from the resolver
    retries: int = Field(default=2, ge=0)  # retries of a check that timed out or met a server error
    backoff_s: float = 2.0  # first retry delay; doubles per retry (exponential backoff)
    max_retry_after_s: float = 300.0  # a longer Retry-After ends the check (outcome server_error) instead of waiting
    alert_after_failures: int = Field(default=2, ge=1)  # alert after this many consecutive failures of one kind
    render: bool = True  # render script-built landing pages (and retry bot challenges) with Chromium
    # Also send HEAD to the landing URL the GET reached; its status and final URL are recorded beside the GET
    # chain, and a disagreement (HEAD 403/405 where GET got 200, another final URL) is flagged.
    head_check: bool = True
    warc_dir: str = "doi-warcs"  # rolling WARC files of every check
    warc_max_bytes: int = 1_000_000_000  # roll over to a new WARC file at this size
    events_topic: str = "driftline-doi-captures"  # capture events (driftline format; add it to kafka.input_topics)
    status_host: str = "127.0.0.1"  # `doi run` serves /doi/status, /doi/check, /metrics, /healthz, /readyz here
    status_port: int = 9309  # 0 = do not serve


class Config(_Frozen):
    engine: EngineConfig = EngineConfig()
    store: StoreConfig = StoreConfig()
    scan: ScanConfig = ScanConfig()
    kafka: KafkaConfig = KafkaConfig()
    events: EventsConfig = EventsConfig()
    acquire: AcquireConfig = AcquireConfig()
    render: RenderConfig = RenderConfig()
    metrics: MetricsConfig = MetricsConfig()
    recommend: RecommendConfig = RecommendConfig()
    actuator: ActuatorConfig = ActuatorConfig()
    alerts: AlertConfig = AlertConfig()
    doi: DoiConfig = DoiConfig()
    seeds: SeedsConfig = SeedsConfig()
    review: ReviewConfig = ReviewConfig()  # watcher/review/settings.py
    crawl_log: CrawlLogConfig = CrawlLogConfig()
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = "text"

    @field_validator("log_level")
    @classmethod
    def _level(cls, v: str) -> str:
        if v.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return v.upper()


def _set_path(tree: dict[str, Any], path: list[str], value: Any) -> None:
    node = tree
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[path[-1]] = value


def is_secret_key(name: str) -> bool:
    """Config keys holding secrets (by name: every one of them is a SecretStr)."""
    name = name.lower()
    return name == "dsn" or name.endswith(("password", "token", "secret"))


def _env_path(key: str) -> list[str]:
    return [p.lower() for p in key[len(ENV_PREFIX):].split("__") if p] if key.startswith(ENV_PREFIX) else []


def env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """Turn ``DRIFTLINE__A__B=value`` variables into a nested mapping (secret keys verbatim)."""
    tree: dict[str, Any] = {}
    for key, raw in environ.items():
        path = _env_path(key)
        if not path:
            continue
        if is_secret_key(path[-1]):
            value: Any = raw if raw != "" else None
        else:
            try:
                value = yaml.safe_load(raw) if raw != "" else None
            except yaml.YAMLError:
                value = raw
        _set_path(tree, path, value)
    return tree


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    override_sources: Mapping[tuple[str, ...], str] | None = None,
) -> Config:
    """Load ``path`` (default: the shipped ``config.yaml``) plus env overrides.

    ``override_sources`` names the command-line option behind each path of
    ``overrides`` (``("scan", "workers") -> "-j/--workers"``) so that an
    error blames the option, not the file.  Raises :class:`ConfigError` with
    one line per validation problem.
    """
    source = Path(path) if path is not None else Path(os.environ.get("DRIFTLINE_CONFIG", DEFAULT_CONFIG))
    data: dict[str, Any] = {}
    if source.exists():
        try:
            loaded = yaml.safe_load(source.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(f"{source}: not valid YAML{where}: {what}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{source}: not a YAML configuration file (not UTF-8 text)") from None
        except OSError as exc:
            raise ConfigError(f"{source}: cannot read the configuration: {exc.strerror or exc}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{source}: top level must be a mapping")
        data = loaded or {}
    elif path is not None:
        raise ConfigError(f"config file not found: {source}")
    env = os.environ if environ is None else environ
    data = _merge(data, env_overrides(env))
    sources: dict[tuple[str, ...], str] = {tuple(_env_path(k)): k for k in env if _env_path(k)}
    if overrides:
        data = _merge(data, overrides)
        sources.update(override_sources or {})
    file = str(source) if source.exists() else ""
    env_raw = {k: v for k, v in env.items() if k.startswith(ENV_PREFIX)}
    try:
        cfg = Config.model_validate(data)
    except ValidationError as exc:
        lines = describe(exc, file=file, sources=sources, env_raw=env_raw, model=Config)
        raise ConfigError("\n".join(lines), problems=lines) from None
    lines = [problem_line(path, value, expected, file=file, sources=sources, env_raw=env_raw)
             for path, value, expected in startup_problems(cfg)]
    if lines:
        raise ConfigError("\n".join(lines), problems=lines)
    return cfg


def startup_problems(cfg: Config) -> list[tuple[tuple[str, ...], Any, str]]:
    """Settings that are valid alone but make no sense for a run: (path, value, what is expected).

    Checked when a configuration is loaded for a command, not in the models: a
    program (or a test) may build a partial configuration on purpose.
    """
    out: list[tuple[tuple[str, ...], Any, str]] = []
    base = cfg.engine.baseline
    if base.policy == "pinned" and not base.pinned:
        # "pinned" without pins silently behaves as "first-valid": refuse it so the operator notices.
        out.append((("engine", "baseline", "policy"), base.policy,
                    "needs engine.baseline.pinned (history key -> 14-digit timestamp) in the config file; "
                    "none is given"))
    return out
