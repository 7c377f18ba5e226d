"""The curator's page: an aiohttp app rendered on the server (aiohttp-jinja2), htmx for partial updates.

Security model.  The page changes data (labels, baselines, mutes), so:

- it binds 127.0.0.1 unless told otherwise, and any other address needs ``review.token`` (checked at
  start-up by :func:`check_bind`); with a token every request must carry it (``?token=`` once, then
  an HttpOnly cookie);
- every write is a POST carrying the page's CSRF token (form field ``csrf`` or header
  ``X-CSRF-Token``), compared in constant time; a POST from another origin is refused too;
- ``read_only`` registers no write route at all (a POST finds no route);
- a request whose ``Host`` is not the bound address, localhost or one of ``review.allowed_hosts`` is
  refused (421) before any handler runs: a page on another site that resolves its own name to this
  machine (DNS rebinding) gets neither the page nor its CSRF token;
- archived HTML is served only to a sandboxed frame (``sandbox`` without ``allow-scripts`` or
  ``allow-same-origin``), its URLs rewritten to the server's resource route (answered from the
  capture's WARC or configured archive, else 404) and under a Content-Security-Policy that admits
  no origin but the review server's (:mod:`watcher.review.frames`): the reviewer's browser never
  reaches the live web, whatever the page links to;
- captures are read only from files under the operator's roots and from ``review.archives``
  (:mod:`watcher.review.access`);
- the token cookie is ``Secure`` when the request came over HTTPS (or ``X-Forwarded-Proto: https``
  with ``review.trust_forwarded_proto``);
- templates autoescape everything a capture holds (titles, text, reasons, notes).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp_jinja2
import jinja2
from aiohttp import web
from prometheus_client import CollectorRegistry, Gauge
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from ..acquire.archived import WarcIndexCache
from ..config import Config
from ..errors import DriftlineError
from ..model import Verdict
from ..net.http import HttpFetcher
from ..store.base import BaselineStore
from ..store.labels import LABELS, POLARITY, SEVERITY, Item, Query, SQLReview
from .access import Access
from .content import Content, load_content, page_text, word_diff
from .frames import SECURITY_HEADERS, archived_csp, document, local_route, resolver_for, resource
from .hosts import answered_hosts, host_ok
from .shots import Shots

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
# One key per label (shown on the controls); j/k move, n writes a note.
KEYS = {"on-topic": "o", "off-topic": "x", "drifted": "d", "unchanged": "u", "blocked": "b", "unsure": "s"}
PAGE_CSP = ("default-src 'self'; frame-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            "connect-src 'self'; object-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
STORE_KEY = web.AppKey("review_state", object)


@dataclass
class ReviewState:
    store: BaselineStore
    review: SQLReview
    cfg: Config
    where: str
    read_only: bool
    token: str | None
    csrf: str
    registry: CollectorRegistry
    reviewed: Gauge
    agreement: Gauge
    labelled: Gauge
    cache: OrderedDict[str, Content]
    lock: asyncio.Lock
    access: Access
    hosts: frozenset[str]  # Host names answered (lower case, no port, IPv6 without brackets)
    any_ip: bool  # bound to a wildcard address: any IP-literal Host is answered (rebinding needs a name)
    index: WarcIndexCache
    header: tuple[float, dict[str, Any]] | None = None  # (when, figures): the page header's, see _header
    shots: Shots | None = None
    fetcher: HttpFetcher | None = None  # the archives' raw replay, for subresources (started on first use)


def _state(request: web.Request) -> ReviewState:
    st = request.app[STORE_KEY]
    assert isinstance(st, ReviewState)
    return st


def query_of(params: Any, size: int) -> Query:
    def get(name: str) -> str:
        return str(params.get(name, "") or "").strip()[:500]

    try:
        page = max(1, int(get("page") or 1))
    except ValueError:
        page = 1
    reviewed = get("reviewed")
    return Query(change=get("change"), profile=get("profile"), where=get("where"), language=get("lang"),
                 date_from=get("from"), date_to=get("to"), reviewed=reviewed if reviewed in ("yes", "no") else "",
                 disagree=get("disagree") in ("1", "on", "yes"), page=page, size=size)


def query_string(q: Query, **change: Any) -> str:
    d = {"change": q.change, "profile": q.profile, "where": q.where, "lang": q.language, "from": q.date_from,
         "to": q.date_to, "reviewed": q.reviewed, "disagree": "1" if q.disagree else "", "page": q.page}
    d.update(change)
    return urlencode({k: v for k, v in d.items() if v not in ("", None, False) and not (k == "page" and v == 1)})


def _refresh_metrics(st: ReviewState) -> dict[str, Any]:
    agree = st.review.agreement()
    n = st.review.reviewed()
    st.reviewed.set(n)
    total = sum(a for a, _ in agree.values())
    ok = sum(b for _, b in agree.values())
    st.agreement.clear()  # a class with no label has no agreement: no sample, not 0.0
    for change, (a, b) in agree.items():
        st.labelled.labels(change=change).set(a)
        if a:
            st.agreement.labels(change=change).set(b / a)
    return {"reviewed": n, "agreement": (ok / total) if total else None,
            "per_class": {c: (b / a if a else None, a) for c, (a, b) in sorted(agree.items())}}


HEADER_TTL_S = 2.0
SYNC_S = 60.0  # how often the queue takes in verdicts stored since (a store a crawl is writing)


def _header(st: ReviewState) -> dict[str, Any]:
    """The header's figures, recomputed after this server's own writes and at most every
    :data:`HEADER_TTL_S` otherwise (another reviewer may write to the same store)."""
    now = time.monotonic()
    if st.header is None or now - st.header[0] > HEADER_TTL_S:
        st.header = (now, _refresh_metrics(st))
    return st.header[1]


def _ctx(request: web.Request, **extra: Any) -> dict[str, Any]:
    st = _state(request)
    return {"csrf": st.csrf, "read_only": st.read_only, "labels": LABELS, "keys": KEYS, "where": st.where,
            "header": _header(st), "severity": SEVERITY,
            "in_archive": lambda uri: st.access.archive_of(uri or "") is not None, **extra}


async def queue(request: web.Request) -> web.StreamResponse:
    st = _state(request)
    q = query_of(request.query, st.cfg.review.page_size)
    page = await asyncio.to_thread(st.review.queue, q)
    pages = max(1, (page.total + q.size - 1) // q.size)
    counts = [(c, page.counts.get(c, 0)) for c in SEVERITY if page.counts.get(c)]
    return aiohttp_jinja2.render_template("queue.html", request, _ctx(
        request, q=q, page=page, pages=pages, counts=counts, qs=query_string(q),
        prev_qs=query_string(q, page=q.page - 1) if q.page > 1 else None,
        next_qs=query_string(q, page=q.page + 1) if q.page < pages else None,
        filter_qs=lambda **kw: query_string(q, page=1, **kw)))


async def _content(st: ReviewState, v: Verdict | None, key: str) -> Content:
    if v is None:
        return Content(None, None, "no baseline")
    async with st.lock:
        hit = st.cache.get(key)
        if hit is not None:
            st.cache.move_to_end(key)
            return hit
    locator = st.review.source(v.verdict_id)
    c = await asyncio.to_thread(load_content, locator, v.uri_m, v.url, v.capture_time, st.cfg, st.access)
    async with st.lock:
        st.cache[key] = c
        while len(st.cache) > 64:
            st.cache.popitem(last=False)
    return c


def _baseline_verdict(st: ReviewState, v: Verdict, timeline: list[Item]) -> Verdict | None:
    if v.baseline_time is None:
        return None
    from ..model import ts14

    want = ts14(v.baseline_time)
    for it in timeline:
        if it.ts == want:
            return st.store.get_verdict(it.verdict_id)
    return None


async def detail(request: web.Request) -> web.StreamResponse:
    st = _state(request)
    vid = request.match_info["vid"]
    v = await asyncio.to_thread(st.store.get_verdict, vid)
    item = await asyncio.to_thread(st.review.item, vid)
    if v is None or item is None:
        raise web.HTTPNotFound(text="no such verdict")
    q = query_of(request.query, st.cfg.review.page_size)
    timeline = await asyncio.to_thread(st.review.timeline, v.history)
    base = _baseline_verdict(st, v, timeline)
    cap_c, base_c = await asyncio.gather(_content(st, v, vid), _content(st, base, f"{vid}:baseline"))
    limit = st.cfg.review.max_text_chars
    base_text, cap_text = page_text(base_c, limit), page_text(cap_c, limit)
    diff = word_diff(base_text, cap_text)
    prev_link, next_link = await asyncio.to_thread(_neighbours, st, q, vid)
    fp_evidence = {"title": v.title, "page kind": v.page_kind or "", "language": v.language or "",
                   "words": v.word_count, "bytes": v.byte_count, "checks": ", ".join(v.checks)}
    return aiohttp_jinja2.render_template("detail.html", request, _ctx(
        request, v=v, item=item, base=base, timeline=timeline, diff=diff, cap_c=cap_c, base_c=base_c,
        no_text={"baseline": "" if base_text.strip() else (base_c.error or "no text"),
                 "capture": "" if cap_text.strip() else (cap_c.error or "no text: the capture holds none")},
        evidence=fp_evidence, voters=set(st.cfg.engine.measures), qs=query_string(q), prev_link=prev_link,
        next_link=next_link,
        changes_only=request.query.get("changes") == "1", muted=st.review.is_muted(item.seed),
        shots=st.shots is not None and st.shots.available))


def _neighbours(st: ReviewState, q: Query, vid: str) -> tuple[str | None, str | None]:
    """Links to the previous and next verdict of the filtered queue (for j/k), across page ends: the
    page in the address is looked at first, then the pages beside it."""
    pages: dict[int, list[str]] = {}

    def ids(n: int) -> list[str]:
        if n not in pages:
            pages[n] = [i.verdict_id for i in st.review.queue(dataclasses.replace(q, page=n)).items] if n >= 1 else []
        return pages[n]

    here = next((n for n in (q.page, q.page + 1, q.page - 1) if vid in ids(n)), None)
    if here is None:
        return None, None
    row = ids(here)
    pos = row.index(vid)
    prev = (here, row[pos - 1]) if pos > 0 else ((here - 1, ids(here - 1)[-1]) if ids(here - 1) else None)
    nxt = (here, row[pos + 1]) if pos < len(row) - 1 else ((here + 1, ids(here + 1)[0]) if ids(here + 1) else None)

    def link(target: tuple[int, str] | None) -> str | None:
        if target is None:
            return None
        qs = query_string(dataclasses.replace(q, page=target[0]))
        return f"/v/{target[1]}" + (f"?{qs}" if qs else "")

    return link(prev), link(nxt)


def is_https(request: web.Request) -> bool:
    """Whether the browser reached the page over HTTPS: TLS here, or a trusted proxy says so."""
    if request.secure:
        return True
    st = _state(request)
    proto = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return st.cfg.review.trust_forwarded_proto and proto == "https"


def _archived_headers(request: web.Request, *, nested: bool = False) -> dict[str, str]:
    origin = f"{'https' if is_https(request) else 'http'}://{request.host}"
    return {"Content-Security-Policy": archived_csp(origin, nested=nested), **SECURITY_HEADERS,
            "Cache-Control": "private, max-age=600"}


async def _side(st: ReviewState, vid: str, which: str) -> Verdict | None:
    """The verdict whose capture is shown on ``which`` side of ``vid``'s detail view."""
    v = await asyncio.to_thread(st.store.get_verdict, vid)
    if v is None or which == "capture":
        return v
    timeline = await asyncio.to_thread(st.review.timeline, v.history)
    return _baseline_verdict(st, v, timeline)


async def archived(request: web.Request) -> web.StreamResponse:
    """The archived HTML of a capture, for the sandboxed frame only: its URLs pointed at
    :func:`archived_resource`, under a policy that admits no other origin (no script, no form)."""
    st = _state(request)
    vid, which = request.match_info["vid"], request.match_info["which"]
    if await asyncio.to_thread(st.store.get_verdict, vid) is None:
        raise web.HTTPNotFound()
    target = await _side(st, vid, which)
    c = await _content(st, target, vid if which == "capture" else f"{vid}:baseline")
    headers = _archived_headers(request)
    if c.data is None or target is None:
        return web.Response(text=f"no archived copy: {c.error or 'unknown'}", content_type="text/plain",
                            headers=headers)
    body, ctype = await asyncio.to_thread(document, c.data, c.content_type or "text/html", target.url,
                                          local_route(vid, which))
    return web.Response(body=body, headers={**headers, "Content-Type": ctype})


async def archived_resource(request: web.Request) -> web.StreamResponse:
    """A subresource of an archived capture (``?which=capture|baseline&url=``): from the capture's WARC
    file (nearest its time) or its configured archive; 404 when neither holds it; never the live web."""
    st = _state(request)
    vid, which, url = request.match_info["vid"], request.query.get("which", "capture"), request.query.get("url", "")
    headers = _archived_headers(request, nested=True)
    target = await _side(st, vid, which if which in ("capture", "baseline") else "capture")
    if target is None:
        raise web.HTTPNotFound(text="no such capture", headers=headers)
    locator = await asyncio.to_thread(st.review.source, target.verdict_id)
    if st.fetcher is None and st.access.archive_of(target.uri_m or "") is not None:
        st.fetcher = _archive_fetcher(st.cfg)
    resolver = resolver_for(st.access, locator, target.uri_m, st.index, st.fetcher)
    got = await resource(resolver, url, target.capture_time)
    if got is None:
        return web.Response(status=404, text="not archived", headers=headers)
    given = next((v for k, v in got.headers.items() if k.lower() == "content-type"), None)
    body, ctype = await asyncio.to_thread(document, got.body, given, url, local_route(vid, which))
    return web.Response(status=got.status if 200 <= got.status < 600 else 200, body=body,  # as archived
                        headers={**headers, "Content-Type": ctype})


def _archive_fetcher(cfg: Config) -> HttpFetcher:
    from ..net.netguard import AddressPolicy

    live = cfg.acquire.live.model_copy(update={"timeout_s": cfg.review.fetch_timeout_s,
                                               "max_bytes": cfg.engine.extract.max_bytes})
    return HttpFetcher(live, AddressPolicy(cfg.acquire.allow_addresses), per_host_delay_s=0.0,
                       max_decompress_ratio=cfg.engine.extract.max_decompress_ratio)


# -- writes -------------------------------------------------------------------

async def _form(request: web.Request) -> dict[str, str]:
    st = _state(request)
    form = await request.post()
    sent = request.headers.get("X-CSRF-Token") or str(form.get("csrf", ""))
    if not sent or not hmac.compare_digest(sent.encode(), st.csrf.encode()):
        raise web.HTTPForbidden(text="missing or wrong CSRF token")
    origin = request.headers.get("Origin")
    if origin and origin != "null" and origin.split("://", 1)[-1] != request.host:
        raise web.HTTPForbidden(text="cross-origin write refused")
    st.header = None  # a write: the header's figures change
    out: dict[str, str] = {}
    for k in form:
        val = form.getall(k)
        out[k] = ",".join(str(x) for x in val)
    return out


def _back(request: web.Request, form: dict[str, str], default: str) -> web.StreamResponse:
    if request.headers.get("HX-Request"):
        return web.Response(status=204, headers={"HX-Refresh": "true"} if form.get("refresh") else {})
    raise web.HTTPSeeOther(form.get("next") or default)


async def post_label(request: web.Request) -> web.StreamResponse:
    st = _state(request)
    form = await _form(request)
    label = form.get("label", "")
    if label not in POLARITY:
        raise web.HTTPBadRequest(text="unknown label")
    ids = [i for i in form.get("ids", form.get("vid", "")).split(",") if i]
    note = form.get("note") if "note" in form else None
    done: list[Item] = []
    for vid in ids[:1000]:
        item = await asyncio.to_thread(st.review.item, vid)
        if item is None:
            continue
        await asyncio.to_thread(st.review.set_label, vid, item.version, label, note, st.cfg.review.reviewer)
        done.append(item)
    if request.headers.get("HX-Request") and len(done) == 1 and not form.get("refresh"):
        item = await asyncio.to_thread(st.review.item, done[0].verdict_id)
        return aiohttp_jinja2.render_template("_labels.html", request, _ctx(request, it=item, oob=True))
    return _back(request, form, "/")


async def post_note(request: web.Request) -> web.StreamResponse:
    st = _state(request)
    form = await _form(request)
    vid = form.get("vid", "")
    item = await asyncio.to_thread(st.review.item, vid)
    if item is None:
        raise web.HTTPNotFound()
    label = item.label or "unsure"
    await asyncio.to_thread(st.review.set_label, vid, item.version, label, form.get("note", "")[:4000],
                            st.cfg.review.reviewer)
    return _back(request, form, f"/v/{vid}")


async def post_pin(request: web.Request) -> web.StreamResponse:
    st = _state(request)
    form = await _form(request)
    vid = form.get("vid", "")
    from .rescore import pin_baseline

    try:
        changed = await asyncio.to_thread(pin_baseline, st.store, st.review, vid, st.cfg, st.cfg.review.reviewer,
                                          st.access)
    except DriftlineError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from exc
    async with st.lock:
        st.cache.clear()
    log.info("pinned %s: %d verdicts re-published", vid, len(changed))
    return _back(request, {**form, "refresh": "1"}, f"/v/{vid}")


async def post_mute(request: web.Request) -> web.StreamResponse:
    st = _state(request)
    form = await _form(request)
    seed = form.get("seed", "")
    if not seed:
        raise web.HTTPBadRequest(text="no seed")
    await asyncio.to_thread(st.review.mute, seed, form.get("muted", "1") == "1", st.cfg.review.reviewer)
    return _back(request, {**form, "refresh": "1"}, "/")


async def screenshot(request: web.Request) -> web.StreamResponse:
    """A PNG of the capture (or its baseline) rendered from the archive, cached."""
    st = _state(request)
    vid, which = request.match_info["vid"], request.match_info["which"]
    v = await asyncio.to_thread(st.store.get_verdict, vid)
    if v is None or st.shots is None:
        raise web.HTTPNotFound()
    if which == "baseline":
        timeline = await asyncio.to_thread(st.review.timeline, v.history)
        target = _baseline_verdict(st, v, timeline)
        if target is None:
            raise web.HTTPNotFound(text="no baseline capture")
    else:
        target = v
    c = await _content(st, target, vid if which == "capture" else f"{vid}:baseline")
    locator = await asyncio.to_thread(st.review.source, target.verdict_id)
    try:
        png = await st.shots.png(f"{target.verdict_id}", target.url, target.capture_time, c, locator, target.uri_m)
    except DriftlineError as exc:
        raise web.HTTPNotFound(text=str(exc)) from exc
    return web.Response(body=png, content_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


async def metrics(request: web.Request) -> web.StreamResponse:
    st = _state(request)
    await asyncio.to_thread(_refresh_metrics, st)
    return web.Response(body=generate_latest(st.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})


async def favicon(_: web.Request) -> web.StreamResponse:
    return web.FileResponse(HERE / "static" / "favicon.svg", headers={"Content-Type": "image/svg+xml",
                                                                      "Cache-Control": "max-age=86400"})


# -- middleware -----------------------------------------------------------------

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    st = _state(request)
    if not host_ok(st.hosts, st.any_ip, request.headers.get("Host")):
        log.warning("review: refused a request for host %r (not the bound address, localhost or "
                    "review.allowed_hosts)", (request.headers.get("Host") or "")[:100])
        return web.Response(status=421, text="this review server does not answer for that host name "
                            "(add it to review.allowed_hosts)\n", headers={"Content-Security-Policy": PAGE_CSP})
    fresh = False
    if st.token:
        given = request.query.get("token") or request.cookies.get("driftline_review", "")
        if not given or not hmac.compare_digest(given.encode(), st.token.encode()):
            raise web.HTTPUnauthorized(text="this review page needs its token (?token=...)")
        fresh = "token" in request.query
    resp = await handler(request)
    if "Content-Security-Policy" not in resp.headers:
        resp.headers["Content-Security-Policy"] = PAGE_CSP
    resp.headers.setdefault("X-Content-Type-Options", "nosniff")
    resp.headers.setdefault("Referrer-Policy", "no-referrer")
    resp.headers.setdefault("X-DNS-Prefetch-Control", "off")
    if fresh and st.token:
        resp.set_cookie("driftline_review", st.token, httponly=True, samesite="Strict", secure=is_https(request))
    return resp


def make_app(store: BaselineStore, review: SQLReview, cfg: Config, *, where: str, read_only: bool = False,
             token: str | None = None, shots_dir: Path | None = None, host: str = "127.0.0.1",
             result: Path | None = None) -> web.Application:
    """The review app; ``shots_dir``: where screenshots are cached (None: no screenshots); ``host``: the
    bound address (answered as a Host name); ``result``: the scan result read (its folder is a root
    locators may point into)."""
    registry = CollectorRegistry()
    access = Access.of(cfg, result)
    hosts, any_ip = answered_hosts(host, cfg.review.allowed_hosts)
    st = ReviewState(
        store=store, review=review, cfg=cfg, where=where, read_only=read_only, token=token,
        csrf=secrets.token_urlsafe(32), registry=registry,
        reviewed=Gauge("driftline_review_captures_reviewed", "Captures the curator labelled", registry=registry),
        agreement=Gauge("driftline_review_agreement_ratio", "Share of labelled captures where the curator's "
                        "polarity agrees with driftline's verdict, per driftline change class", ["change"],
                        registry=registry),
        labelled=Gauge("driftline_review_labelled", "Labelled captures with a topic polarity, per driftline change "
                       "class", ["change"], registry=registry),
        cache=OrderedDict(), lock=asyncio.Lock(), access=access, hosts=hosts, any_ip=any_ip,
        index=WarcIndexCache(cfg, cfg.render.archive_index_files),
        shots=Shots(cfg, shots_dir, access) if shots_dir is not None and cfg.review.screenshots else None)
    for c in SEVERITY:  # every count exported from the start (the metrics module's convention); an
        st.labelled.labels(change=c).set(0)  # agreement only where there are labels to agree
    app = web.Application(middlewares=[guard], client_max_size=1 << 20)
    app[STORE_KEY] = st
    env = aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                               undefined=jinja2.StrictUndefined)
    env.filters["pct"] = lambda x: "–" if x is None else f"{100 * x:.0f}%"
    app.router.add_get("/", queue)
    app.router.add_get("/v/{vid}", detail)
    app.router.add_get("/archived/{vid}/{which:capture|baseline}", archived)
    app.router.add_get("/archived/{vid}/res", archived_resource)
    app.router.add_get("/favicon.ico", favicon)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/shot/{vid}/{which:capture|baseline}.png", screenshot)

    async def close_shots(_: web.Application) -> None:
        if st.shots is not None:
            await st.shots.close()
        if st.fetcher is not None:
            await st.fetcher.close()

    async def follow(_: web.Application) -> AsyncIterator[None]:
        """Verdicts a running ``driftline run`` stores meanwhile join the queue (one sync a minute)."""
        async def loop() -> None:
            while True:
                await asyncio.sleep(SYNC_S)
                try:
                    if await asyncio.to_thread(review.sync):
                        st.header = None
                except DriftlineError as exc:
                    log.warning("review: cannot read new verdicts: %s", exc)

        task = asyncio.create_task(loop())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    app.on_cleanup.append(close_shots)
    app.cleanup_ctx.append(follow)
    app.router.add_static("/static/", str(HERE / "static"))
    if not read_only:
        app.router.add_post("/label", post_label)
        app.router.add_post("/note", post_note)
        app.router.add_post("/pin", post_pin)
        app.router.add_post("/mute", post_mute)
    return app


def started_line(where: str, url: str) -> str:
    return f"driftline review: store {where}; serving {url}"


async def serve(app: web.Application, host: str, port: int, on_start: Callable[[str], None] | None = None,
                stop: asyncio.Event | None = None) -> None:
    """Serve until ``stop`` is set (or forever); ``on_start`` gets the URL once listening."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1] if runner.addresses else port
    url = f"http://{host if ':' not in host else f'[{host}]'}:{bound}/"
    if on_start is not None:
        on_start(url)
    try:
        if stop is None:
            while True:
                await asyncio.sleep(3600)
        else:
            await stop.wait()
    finally:
        await runner.cleanup()
