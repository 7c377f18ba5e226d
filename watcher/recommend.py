"""Crawl-stop recommendations: when a seed went off topic and stays there.

Why only then: in archived collections about a tenth of seeds follow a *Step
Function On* TimeMap (on topic, then off for good: parked domain, suspended
hosting, rewritten site); those are the seeds a curator wants to stop
crawling.  Another tenth *oscillate* (an error page once, a hacked page for a
week): those are flagged capture by capture, but stopping them would lose good
captures, so no recommendation fires until ``consecutive_off_topic`` captures
in a row are off topic.

The decision reads the verdict history from the store
(:meth:`BaselineStore.recent_verdicts`), never from process memory, so it
survives restarts and gives the same answer in whichever consumer of a group
sees the capture.  It is a pure function of the stored history:

* the *run* is the sequence of off-topic verdicts that ends at the newest
  verdict of the history (an older on-topic or baseline verdict ends it);
* a recommendation fires when the run is at least N long and the observed
  capture is one of the first N captures of the run (in capture-time order);
* its id is derived from the history and the verdict id of the N-th capture
  of the run, so every re-delivery and every late capture of the same run
  yields the *same* id (downstream deduplicates on it), and a later off-topic
  capture (N+1, N+2 ...) yields nothing.  After the seed comes back on topic a
  new run starts, and a new id.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from .canonical import surt_prefix, url_key
from .config import ActuatorConfig, CanonicalConfig, RecommendConfig
from .model import Verdict, utc
from .store.base import BaselineStore

log = logging.getLogger(__name__)

_MAX_LOOKBACK = 4096
_ISSUED_MEMORY = 10_000


class SeedEvent(Protocol):
    """What the recommender reads from a crawl event.

    :class:`watcher.events.CaptureEvent` satisfies it; any object with these
    read-only attributes does.
    """

    @property
    def url(self) -> str: ...

    @property
    def seed(self) -> str | None: ...

    @property
    def job(self) -> str | None: ...

    @property
    def crawler(self) -> str | None: ...

    @property
    def hop_path(self) -> str | None: ...

    @property
    def extra(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Recommendation:
    """One crawl-stop recommendation, as published on the recommendations topic."""

    id: str
    history: str
    seed: str
    job: str | None
    crawler: str | None
    since: datetime
    captures: tuple[str, ...]
    page_kind: str | None
    reason: str
    what_to_do: str
    surt_prefix: str
    action: RecommendationAction = "stop-seed"
    site_id: str | None = None  # Brozzler site id, when the event carried one
    # Guidance: what the advice rests on (yield, Badness, change rate, verdict ids; see
    # watcher.actuators.guidance) and, for "recrawl-interval", the interval advised.
    evidence: Mapping[str, Any] | None = None
    recrawl_interval_days: float | None = None
    crawl_id: str | None = None  # Browsertrix crawl id, when known

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["since"] = utc(self.since).isoformat().replace("+00:00", "Z")
        out["captures"] = list(self.captures)
        out["evidence"] = dict(self.evidence) if self.evidence is not None else None
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recommendation:
        since = datetime.fromisoformat(str(data["since"]).replace("Z", "+00:00"))
        return cls(
            id=str(data["id"]),
            history=str(data["history"]),
            seed=str(data["seed"]),
            job=data.get("job"),
            crawler=data.get("crawler"),
            since=since,
            captures=tuple(data.get("captures") or ()),
            page_kind=data.get("page_kind"),
            reason=str(data.get("reason", "")),
            what_to_do=str(data.get("what_to_do", "")),
            surt_prefix=str(data.get("surt_prefix") or surt_prefix(str(data["seed"]))),
            action=_action(data.get("action")),
            site_id=data.get("site_id"),
            evidence=dict(data["evidence"]) if isinstance(data.get("evidence"), Mapping) else None,
            recrawl_interval_days=(
                float(data["recrawl_interval_days"]) if data.get("recrawl_interval_days") is not None else None
            ),
            crawl_id=data.get("crawl_id"),
        )


RecommendationAction = Literal["stop-seed", "deprioritise-seed", "recrawl-interval"]
# A guidance recommendation is a Recommendation whose action is one of these.
GUIDANCE_ACTIONS: tuple[RecommendationAction, ...] = ("deprioritise-seed", "recrawl-interval")
GuidanceRecommendation = Recommendation


def _action(value: object) -> RecommendationAction:
    if value == "deprioritise-seed":
        return "deprioritise-seed"
    if value == "recrawl-interval":
        return "recrawl-interval"
    return "stop-seed"


def recommendation_id(history: str, completing_verdict_id: str) -> str:
    """Deterministic id: the history plus the verdict that completed the run."""
    raw = f"stop-seed|{history}|{completing_verdict_id}".encode()
    return hashlib.sha256(raw).hexdigest()[:32]


def is_seed(url: str, event: SeedEvent | None, verdict: Verdict, canonical: CanonicalConfig | None = None) -> bool:
    """True when the capture is of a seed (not of a page found from one).

    A Heritrix feed says so twice: ``seed`` equals ``url`` and the hop path is
    empty.  Either is enough (warcprox feeds carry neither, verdicts from a
    batch scan carry ``verdict.seed``).  Unknown means not a seed: a stop
    recommendation for a page deep inside a site would be wrong.
    """
    seed = event.seed if event is not None and event.seed else verdict.seed
    if seed and url_key(seed, canonical) == url_key(url, canonical):
        return True
    hop_path = event.hop_path if event is not None else None
    return hop_path is not None and hop_path.strip() in ("", "-")


def heritrix_what_to_do(seed: str, job: str | None, heritrix_url: str) -> str:
    """The Heritrix 3 operator's two options, spelled out for this seed."""
    prefix = surt_prefix(seed)
    job_name = job or "JOB"
    base = heritrix_url.rstrip("/")
    return (
        f"Heritrix: keep the job running and reject the seed's host: "
        f"POST {base}/engine/job/{job_name}/script with form fields engine=groovy and a script that adds "
        f"'{prefix}' to a REJECT SurtPrefixedDecideRule of appCtx.getBean(\"scope\") "
        f"(rule.nonseedLine('-{prefix}'); `driftline` actuator kind=heritrix sends exactly this), "
        f"or add the line '-{prefix}' to the seeds file of a scope with a REJECT SurtPrefixedDecideRule. "
        f"To pause the whole job instead: curl -k --anyauth -u admin:PASSWORD --location "
        f"-d action=pause {base}/engine/job/{job_name}"
    )


def brozzler_what_to_do(seed: str, job: str | None) -> str:
    """The Brozzler operator's two options, spelled out for this seed."""
    host = seed_host(seed)
    rule = json.dumps({"domain": host})
    job_hint = f" (job {job})" if job else ""
    return (
        f"Brozzler: stop the site{job_hint}: brozzler-stop-crawl --site=SITE_ID (the site whose seed is {seed}), "
        f"or keep it running and add {rule} to the site's scope.blocks"
    )


def _site_id(event: SeedEvent | None, *keys: str) -> str | None:
    """An id the event's ``extra`` carries (default: the Brozzler site id)."""
    extra = getattr(event, "extra", None) if event is not None else None
    if isinstance(extra, Mapping):
        value = next((extra.get(k) for k in keys or ("site_id", "brozzler_site_id") if extra.get(k)), None)
        return str(value) if value else None
    return None


def seed_host(url: str) -> str:
    """The seed's host name (``www.`` dropped, as in its SURT prefix: a crawler's scope rule, not a history key,
    so the default canonical rules on purpose)."""
    key = url_key(url)
    host = key.split(")", 1)[0]
    return ".".join(reversed([p for p in host.split(":")[0].split(",") if p]))


def what_to_do(seed: str, job: str | None, crawler: str | None, heritrix_url: str) -> str:
    """Concrete instructions for the crawler that captured the seed (both when unknown)."""
    kind = (crawler or "").lower()
    if kind.startswith("heritrix"):
        return heritrix_what_to_do(seed, job, heritrix_url)
    if kind.startswith(("brozzler", "warcprox")):
        return brozzler_what_to_do(seed, job)
    return heritrix_what_to_do(seed, job, heritrix_url) + ". " + brozzler_what_to_do(seed, job)


class Recommender:
    """Turns verdicts into crawl-stop recommendations (see the module doc).

    ``observe`` is synchronous and reads the store; async callers run it in a
    thread like every other store call.  An in-process memory of issued ids
    suppresses re-publishing within one process; across processes the
    deterministic id lets the consumer of the recommendations topic
    deduplicate.
    """

    def __init__(
        self,
        cfg: RecommendConfig,
        store: BaselineStore,
        *,
        actuator: ActuatorConfig | None = None,
        canonical: CanonicalConfig | None = None,
    ) -> None:
        """``canonical``: the ``engine.canonical`` that builds histories (a seed is told by the same rules)."""
        if cfg.consecutive_off_topic < 1:
            from .errors import ConfigError

            raise ConfigError("recommend.consecutive_off_topic must be >= 1", reason="config")
        self.cfg = cfg
        self.store = store
        self._heritrix_url = (actuator or ActuatorConfig()).heritrix_url
        self._canonical = canonical
        self._issued: OrderedDict[str, None] = OrderedDict()

    def observe(self, verdict: Verdict, event: SeedEvent | None = None) -> Recommendation | None:
        """The recommendation completed by ``verdict``, or ``None``.

        Never issues twice for one run within a process; the same run always
        maps to the same :attr:`Recommendation.id`.
        """
        n = self.cfg.consecutive_off_topic
        if verdict.status not in self.cfg.off_topic_statuses:
            return None
        url = event.url if event is not None else verdict.url
        if self.cfg.seeds_only and not is_seed(url, event, verdict, self._canonical):
            log.debug("recommend: %s is not a seed, no stop recommendation", verdict.history)
            return None
        run, position = self._run(verdict)
        if position is None or len(run) < n:
            return None
        # ``run`` is newest first; the observed capture's index in time order:
        time_index = len(run) - 1 - position
        if time_index >= n:
            return None  # a later capture of a run that was already reported
        first_n = list(reversed(run))[:n]
        completing = first_n[-1]
        rec_id = recommendation_id(verdict.history, completing.verdict_id)
        if rec_id in self._issued:
            return None
        self._remember(rec_id)
        seed = self._seed(url, event, verdict)
        job = (event.job if event is not None else None) or verdict.job
        crawler = event.crawler if event is not None else None
        kinds = [v.page_kind for v in first_n if v.page_kind]
        page_kind = max(set(kinds), key=kinds.count) if kinds else None
        reason = (
            f"{n} consecutive captures off topic since {utc(first_n[0].capture_time).isoformat()}"
            + (f" (page kind: {page_kind})" if page_kind else "")
            + f"; last: {completing.reason}"
        )
        rec = Recommendation(
            id=rec_id,
            history=verdict.history,
            seed=seed,
            job=job,
            crawler=crawler,
            since=first_n[0].capture_time,
            captures=tuple(v.verdict_id for v in first_n),
            page_kind=page_kind,
            reason=reason,
            what_to_do=what_to_do(seed, job, crawler, self._heritrix_url),
            surt_prefix=surt_prefix(seed),
            site_id=_site_id(event),
            crawl_id=_site_id(event, "crawl_id", "browsertrix_crawl_id"),
        )
        log.info("recommend: stop seed %s (history %s, id %s)", seed, verdict.history, rec_id)
        return rec

    def forget(self) -> None:
        """Forget the ids issued in this process (they were never recorded: a store write failed), so that
        the same run is issued again; a ledger downstream drops it if it was recorded after all."""
        self._issued.clear()

    # -- internals ---------------------------------------------------------

    def _seed(self, url: str, event: SeedEvent | None, verdict: Verdict) -> str:
        if event is not None and event.seed:
            return event.seed
        return verdict.seed or url

    def _remember(self, rec_id: str) -> None:
        self._issued[rec_id] = None
        while len(self._issued) > _ISSUED_MEMORY:
            self._issued.popitem(last=False)

    def _run(self, verdict: Verdict) -> tuple[list[Verdict], int | None]:
        """(the off-topic run ending at the newest verdict, newest first;
        index of ``verdict`` in it or None when it is not part of it)."""
        n = self.cfg.consecutive_off_topic
        limit = 2 * n + 1
        while True:
            recent = self.store.recent_verdicts(verdict.history, limit)
            exhausted = len(recent) < limit or limit >= _MAX_LOOKBACK
            recent = _with_observed(recent, verdict, exhausted)
            run: list[Verdict] = []
            broken = False
            for v in recent:
                if v.status == "empty":
                    # No content says nothing about topic: it neither counts toward the run nor breaks
                    # it; the run counts captures judged off topic.
                    continue
                if v.status not in self.cfg.off_topic_statuses:
                    broken = True
                    break
                run.append(v)
            complete = broken or exhausted
            position = next((i for i, v in enumerate(run) if v.verdict_id == verdict.verdict_id), None)
            if complete or (position is not None and len(run) - 1 - position >= n):
                return run, position
            limit = min(limit * 4, _MAX_LOOKBACK)


def _with_observed(recent: Sequence[Verdict], verdict: Verdict, exhausted: bool) -> list[Verdict]:
    """``recent`` with ``verdict`` in its place when the store does not have it
    (a caller that observes before storing, or a store lagging behind)."""
    out = list(recent)
    if any(v.verdict_id == verdict.verdict_id for v in out):
        return out
    t = utc(verdict.capture_time)
    for i, v in enumerate(out):
        if utc(v.capture_time) < t:
            out.insert(i, verdict)
            return out
    if exhausted:
        out.append(verdict)
    return out
