"""The capture event: what a crawler feed says about one finished fetch.

Every feed format (Heritrix's Kafka crawl-log feed, crawl.log lines, the
warcprox listener JSON, driftline's own event JSON) is parsed into one frozen
:class:`CaptureEvent`, so the consumer, the skip rule and the acquirer never
branch on the feed format.  An event is *metadata*: where the captured bytes
are (inline, in a WARC, behind a replay URI, or only live) and what the crawler
observed (status, MIME type, payload digest).  :meth:`CaptureEvent.to_capture`
turns it plus the obtained bytes into the engine's :class:`~watcher.model.Capture`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..canonical import url_key
from ..config import CanonicalConfig, Config, EngineConfig
from ..model import Capture, utc

_DEFAULT_CANONICAL = CanonicalConfig()


def normalise_digest(value: str | None) -> str | None:
    """Return a payload digest as ``sha1:BASE32`` (or ``algo:VALUE``), ``None`` if absent.

    Why: Heritrix and warcprox (``--base32``) write ``sha1:BASE32``, warcprox
    without ``--base32`` writes ``sha1:<hex>``, CDX files drop the prefix, and
    crawl.log writes ``-`` for none.  Comparing digests across sources (event
    vs. baseline) only works on one spelling.
    """
    if value is None:
        return None
    raw = value.strip()
    if raw in ("", "-"):
        return None
    algo, sep, rest = raw.partition(":")
    if not sep:
        algo, rest = "sha1", raw
    algo = algo.strip().lower().replace("-", "")
    rest = rest.strip()
    if not rest:
        return None
    if algo == "sha1" and len(rest) == 40:
        try:
            rest = base64.b32encode(binascii.unhexlify(rest)).decode("ascii")
        except (binascii.Error, ValueError):
            return f"{algo}:{rest.upper()}"
        return f"sha1:{rest}"
    return f"{algo}:{rest.upper()}" if algo == "sha1" else f"{algo}:{rest}"


def _canonical_cfg(cfg: CanonicalConfig | EngineConfig | Config | None) -> CanonicalConfig:
    if cfg is None:
        return _DEFAULT_CANONICAL
    if isinstance(cfg, Config):
        return cfg.engine.canonical
    if isinstance(cfg, EngineConfig):
        return cfg.canonical
    return cfg


@dataclass(frozen=True, slots=True)
class CaptureEvent:
    """One capture announced by a crawler feed (or by driftline's DOI scheduler).

    Fields (``None`` when the feed does not carry them):

    - ``url``: the captured URI (URI-R); ``timestamp``: capture (fetch start)
      time, aware UTC.
    - ``status_code``: HTTP status, or Heritrix's negative fetch-failure codes
      (``-5000``, ``-9998``...); ``mimetype``: as the crawler logged it (may
      carry ``; charset=``); ``content_length``: payload bytes.
    - ``digest``: payload digest normalised by :func:`normalise_digest`.
    - ``seed``, ``via``, ``hop_path``, ``job`` (crawl job name), ``crawler``
      (``heritrix``, ``warcprox``, ``driftline``...).
    - ``warc_filename``/``warc_offset``/``warc_length``: where the record is.
    - ``replay_uri``: a raw or rewritten replay URI-M, if the feed gives one.
    - ``content``: inline payload bytes, already decoded from the event's
      transport encoding; ``content_encoding`` records that encoding
      (``"base64"`` or ``"text"``) for diagnostics.
    - ``annotations``: crawler annotations (``duplicate:digest``, ``ip:...``).
    - ``extra``: every other field (Archive-It ``account_id``,
      ``collection_id``, ``is_test_crawl``, ``extra_info``...), kept so
      downstream output can carry it.
    - ``doi`` and ``watch``: set by driftline events from the DOI scheduler.
    - ``topic``/``partition``/``offset``: source position, filled by the
      consumer (:meth:`with_position`) for logs and dead letters.
    - ``format``: the feed format the event was parsed from.
    """

    url: str
    timestamp: datetime
    status_code: int | None = None
    mimetype: str | None = None
    content_length: int | None = None
    digest: str | None = None
    seed: str | None = None
    via: str | None = None
    hop_path: str | None = None
    job: str | None = None
    crawler: str = "unknown"
    warc_filename: str | None = None
    warc_offset: int | None = None
    warc_length: int | None = None
    replay_uri: str | None = None
    content: bytes | None = None
    content_encoding: str | None = None
    annotations: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    doi: str | None = None
    watch: Mapping[str, Any] | None = None
    format: str = "unknown"
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "timestamp", utc(self.timestamp))
        object.__setattr__(self, "digest", normalise_digest(self.digest))

    @property
    def is_duplicate(self) -> bool:
        """True when the crawler recorded a revisit (``duplicate:digest``)."""
        return any(a.startswith("duplicate:") for a in self.annotations)

    @property
    def position(self) -> str:
        """``topic[partition]@offset`` for log lines (``-`` when unknown)."""
        if self.topic is None:
            return "-"
        return f"{self.topic}[{self.partition}]@{self.offset}"

    def with_position(self, topic: str, partition: int, offset: int) -> CaptureEvent:
        """A copy carrying the Kafka position it was consumed from."""
        return dataclasses.replace(self, topic=topic, partition=partition, offset=offset)

    @property
    def watch_history(self) -> str | None:
        """The history a watch names (``watch.id``: the DOI monitor's ``doi:<doi>``), else None.

        A DOI's landing URL can change (a platform move is one of the things
        watched for), so its captures are one history by DOI, not by URL: the
        monitor and the streaming watcher then score a check into one state."""
        wid = self.watch.get("id") if self.watch is not None else None
        return wid if isinstance(wid, str) and wid else None

    @property
    def expected_title(self) -> str | None:
        """The registered title a DOI check carries (``extra.expected_title``)."""
        t = self.extra.get("expected_title") if self.extra else None
        return t if isinstance(t, str) and t else None

    def history_key(self, cfg: CanonicalConfig | EngineConfig | Config | None = None) -> str:
        """Key of this capture's history: the watch's (:attr:`watch_history`), else the canonical URL key
        (same as the batch scanner's)."""
        return self.watch_history or url_key(self.url, _canonical_cfg(cfg))

    def to_driftline(self) -> dict[str, Any]:
        """This event as driftline event JSON (``event.schema.json``), e.g. for the DOI scheduler.

        Inline content is base64-encoded; crawler-specific fields go to ``extra``.
        """
        out: dict[str, Any] = {"type": "driftline.capture", "url": self.url, "timestamp": self.timestamp.isoformat()}
        optional: dict[str, Any] = {
            "status_code": self.status_code,
            "mimetype": self.mimetype,
            "content_length": self.content_length,
            "digest": self.digest,
            "seed": self.seed,
            "via": self.via,
            "hop_path": self.hop_path,
            "job": self.job,
            "warc_filename": self.warc_filename,
            "warc_offset": self.warc_offset,
            "warc_length": self.warc_length,
            "replay_uri": self.replay_uri,
            "doi": self.doi,
            "watch": dict(self.watch) if self.watch is not None else None,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        out["crawler"] = self.crawler if self.crawler != "unknown" else "driftline"
        if self.content is not None:
            out["content"] = base64.b64encode(self.content).decode("ascii")
            out["content_encoding"] = "base64"
        if self.annotations:
            out["annotations"] = list(self.annotations)
        if self.extra:
            out["extra"] = dict(self.extra)
        return out

    def to_capture(
        self,
        content: bytes | None,
        content_type: str | None = None,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        source: str | None = None,
        digest: str | None = None,
        redirects: tuple[str, ...] = (),
        uri_m: str | None = None,
    ) -> Capture:
        """The engine's :class:`Capture` for this event and the obtained payload.

        ``content_type``/``status`` default to what the crawler logged;
        ``digest`` defaults to the event's digest (the crawler hashed exactly
        the bytes in its WARC) and, without one, to the digest of ``content``.
        Live fetches pass the digest of what they fetched, since that is not
        what the crawler saw.
        """
        chosen_digest = normalise_digest(digest) or self.digest
        return Capture(
            url=self.url,
            timestamp=self.timestamp,
            content=content,
            content_type=content_type or self.mimetype,
            status=status if status is not None else self.status_code,
            headers=dict(headers or {}),
            digest=chosen_digest,
            uri_m=uri_m or self.replay_uri,
            source=source or self.crawler,
            is_revisit=self.is_duplicate and content is None,
            redirects=redirects,
            seed=self.seed,
            job=self.job,
            history=self.watch_history,
            doi=self.doi,
            expected_title=self.expected_title,
        )
