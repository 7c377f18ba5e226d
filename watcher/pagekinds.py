"""Recognise the classic off-topic page kinds from their content.

Curators label a capture off topic when it no longer serves the seed's
purpose: error pages served with status 200 (soft 404), parked or for-sale
domains, "account suspended" hosting pages, database errors, "under
construction" and default server pages, bot challenges, defacements, and
pages that show members only a login form ("You must log in to continue").  These
pages look alike across sites and languages, so a phrase list over the title,
headings and the start of the text finds them without any baseline.

A phrase names a page kind only where it is what the page is: in the title or
the main (first) heading, or in a block that holds most of the page's own
text.  In another heading or in the body it counts only when the page is
short (a long article that *mentions* "page not found" is not a soft 404) and
carries no substantial text of its own beside the notice
(:func:`_holds_page`): a blog theme prints its empty loop ("Nothing Found ...
It seems we can't find what you're looking for. Perhaps searching can help.")
under a featured article's 200-word summary on the home page, and a search
widget or a "no comments yet" block sits beside an article; none of them is
an error page.  Wherever it is, it must stand as the page's own notice,
not as words in a sentence or a headline about something else: news and
activist pages report blocks, hacks and works ("a web page, still under
construction, and a booklet", "Access Denied- Thousands of Palestinians are
being denied access to water"), and a deep page read by its main content is
short enough for the body rule.  So a phrase counts in a unit -- the title, a
heading, a line of text -- that is short or that it opens, and not where it is
a headline's kicker (:func:`_notice`).
"""

from __future__ import annotations

import re
import re._constants as sre_constants
import re._parser as sre_parse
from dataclasses import dataclass

from .text import fold_letters, title_segments

# Phrases that headlines use about something else ("Activist's Twitter account suspended", "Mobile
# service unavailable in Tahrir", "Subsidised bread no longer available", "New Suez Canal under
# construction", "Egypt ministry website hacked by activists", "Elections coming soon") count only
# where the unit says them of the page, the site or an account, after an exclamation or a status
# code at most ("503 Service Unavailable", "Sorry, this content is no longer available", "Our
# website is currently under construction", "Hacked By Mr.X", "Error: Access Denied", "Website
# Coming Soon"; not "More coming soon!" closing a post).
_NOTICE_LEAD = r"^\W*(?:(?:error|oops|sorry|warning|\d{3})\W+)*"
_SAID_OF = (_NOTICE_LEAD + r"(?:(?:our|this|the|your|that)\s+)?(?:(?:new|requested)\s+)?(?:(?:web ?site|site|page|"
            r"blog|domain|account|content|file|article|item|post|link|url|document|channel|video|photo|profile)"
            r"(?:\s+you\s+(?:requested|followed|(?:are|were) looking for))?\s+)?(?:(?:is|has been|was)\s+)?"
            r"(?:(?:currently|temporarily|now)\s+)?")
# kind -> phrases (lowercase; regular expressions).  Several languages each:
# the collections this tool serves are multilingual.
_PHRASES: dict[str, tuple[str, ...]] = {
    "soft-404": (
        r"\b404\b.{0,40}(not found|error|page)", r"^\s*(error )?404\s*([|:\-–—]|$)", r"page (was )?not found",
        # WordPress's own 404 ("Oops! That page can’t be found.") and the CMSs' "could not be found"
        r"page cannot be found", r"(that |this )?page can'?t be found",
        r"(page|url|file|resource) you (have )?requested (could not|cannot|can'?t) be found",
        r"(page|url|file|resource) you (have )?requested (was not found|(does not|doesn'?t) exist)",
        # WordPress's default themes' 404 (Twenty Eleven to Twenty Seventeen): "This is somewhat
        # embarrassing, isn't it?", "It seems we can't find what you're looking for", "It looks like
        # nothing was found at this location"
        r"this is somewhat embarrassing, isn'?t it", r"it seems we can'?t find what you'?re looking for",
        # WordPress's classic default theme (Kubrick) and its many copies; Pinterest's and others'
        # "we couldn't find that page"
        r"you are looking for something that isn'?t here", r"(couldn'?t|could not) find (that|this) page",
        r"nothing was found at this location",
        r"page you (are|were) looking for", r"requested (url|page) (was not found|could not be found)",
        _SAID_OF + r"no longer (available|exists)", r"(page|file) (does not|doesn't) exist",
        r"not found on this server",
        r"página no encontrada", r"no se (ha podido encontrar|encontr[óo]) la página",
        r"page (introuvable|non trouvée)",
        r"seite (wurde )?nicht gefunden", r"pagina non trovata", r"página não encontrada", r"страница не найдена",
        r"sayfa bulunamadı", r"http error 404", r"error 404",
        r"object not found", r"this page (has been|was) (removed|deleted|moved)", r"էջը (չի )?գտնվ",
        r"pagina niet gevonden", r"strona nie (zosta[łl]a )?znaleziona", r"stránka nenalezena", r"sivua ei löydy",
        r"sidan (kunde inte hittas|hittades inte)", r"σελίδα δεν βρέθηκε", r"דף לא נמצא", r"صفحه (مورد نظر )?یافت نشد",
        r"ページが見つかりません", r"页面不存在|找不到(该|此)?页面|页面未找到",
        r"페이지를 찾을 수 없습니다", r"halaman tidak ditemukan",
        # platforms: the item is gone, the page that held it stays up
        r"this video (has been removed|is (no longer available|unavailable|private))",
        r"(this|the) (channel|account|user|video) (does not|doesn't) exist",
        r"this (content|page) (isn't|is not) available",
        r"the link you followed may (be broken|have expired|have been removed)", r"blog not found",
        r"sorry, the blog at .{0,80} has been removed",
        r"this (content|page) is (currently )?unavailable",
        # Facebook's removed or hidden page, titled "Content Not Found" where its heading is missing
        r"page you requested cannot be displayed", r"^content not found",
        r"this (channel|(user )?account|user|video) (has been|is) "
        r"(suspended|terminated|removed|not available|unavailable)",
        r"cette page n'existe (pas|plus)",
        r"la page (demandée|que vous (recherchez|cherchez)) (n'existe (pas|plus)|est introuvable)",
        r"^\s*there'?s nothing here", r"(blog|site) has been archived or suspended",
        # Arabic: the phrases of the platforms' and the common CMSs' own error pages ("this content
        # is not available", "the page you are looking for", "the blog was not found", "error 404")
        r"الصفحة (غير (موجودة|متوفرة|متاحة)|المطلوبة غير)", r"الصفحة التي (تبحث|تبحثين|تحاول الوصول|طلبتها) ",
        r"لم يتم العثور على (الصفحة|المدونة|المقال)", r"(المدونة|الصفحة) (غير موجودة|غير متوفرة)",
        r"(هذا المحتوى|هذا الفيديو|هذه القناة|هذا الحساب) غير (متوفر|متاح|موجود)", r"تمت? إزالة هذا الفيديو",
        r"الرابط الذي (اتبعته|نقرت عليه)", r"خطأ\s*404|404\s*خطأ",
        # the WordPress themes' "It seems we can't find what you're looking for" in Arabic
        r"يبدو (أننا|اننا) (لا نستطيع|لم نتمكن من|لا يمكننا) (العثور على|إيجاد) (ما|الصفحة)",
    ),
    "login-wall": (
        r"you (must|need to) (be )?log(ged)? ?in(to)? (to )?(continue|see|view|access|read)",
        r"(please )?(log|sign) ?in to (continue|view this|see this|access this|read this)",
        r"^log ?in(to)? (to )?facebook", r"^login [•|-] instagram", r"(these|this account's) tweets are protected",
        r"this blog is open to invited readers only", r"this site is marked private", r"^private site\b",
        r"(debes|tienes que) iniciar sesión", r"vous devez (vous connecter|être connecté)",
        r"(sie müssen|bitte) (sich )?(anmelden|angemeldet sein|melde dich an)", r"يجب (عليك )?تسجيل الدخول",
        # Facebook's own login page, in Arabic as in English.  Not the platforms' front doors
        # ("Welcome to Facebook - Log In, Sign Up or Learn More", "Welcome to Twitter"): a seed a
        # crawler never reached ("twitter.com/#!/name" fetches twitter.com) shows one at every
        # capture, its first included, and is judged against it; where a front door replaces a
        # page, the text measures see the page go (tests/extract/test_extract.py).
        r"^تسجيل الدخول (إلى|على) (فيسبوك|فيس بوك)",
        r"(سجل|يرجى تسجيل|الرجاء تسجيل) الدخول (للمتابعة|لمتابعة|لعرض|لمشاهدة|للاطلاع)", r"التغريدات (هذه )?محمية",
    ),
    "parked": (
        r"(this|the) domain (name )?(is|may be) for sale", r"buy this domain", r"domain (is )?for sale",
        r"this (web )?page is parked", r"parked (free|domain)", r"domain parking", r"sedo(parking)?(?![a-z])",
        r"hugedomains", r"this domain (has )?expired", r"domain (name )?(has )?expired",
        r"related (searches|links).{0,200}(privacy policy|sponsored)", r"inquire about this domain",
        r"get this domain", r"the domain .{0,60} (is|has been) registered", r"domain names? (is )?available",
        r"dominio (en venta|está a la venta)", r"ce (nom de )?domaine est (à vendre|en vente)",
        r"domain steht zum verkauf", r"namebright", r"dan\.com", r"afternic", r"bodis",
        r"(هذا )?(النطاق|الدومين|اسم النطاق) (للبيع|معروض للبيع)", r"انتهت صلاحية (هذا )?(النطاق|الدومين|اسم النطاق)",
    ),
    "suspended": (
        _SAID_OF + r"account (has been |is )?suspended", _SAID_OF + r"(site|website) (has been |is )?suspended",
        r"this account has been (suspended|disabled|terminated)", r"bandwidth (limit )?exceeded",
        r"account (is )?(disabled|deactivated)", r"hosting (account )?(has )?expired", r"cuenta suspendida",
        r"compte suspendu", r"konto gesperrt", r"this site (has been|is) (archived|disabled|deleted)",
        r"site (is )?no longer available", r"blog (has been )?(deleted|removed|suspended)",
        r"the authors have deleted this (site|blog)",  # WordPress.com's notice for a deleted blog
        r"contact (your|the) (hosting|web host)", r"billing issue", r"(site|sitio|sítio) (is )?(not|no|não) "
        r"(available|disponible|disponível)", r"site (temporarily )?unavailable",
        r"sitio (temporalmente )?no disponible",
        r"site (temporairement )?indisponible", r"сайт (временно )?(недоступен|заблокирован)",
        r"الموقع (غير متاح|موقوف)", r"(الحساب|حساب) (معلق|موقوف)", r"هذا (الموقع|الحساب) (معلق|موقوف|محجوب)",
        r"تم (إيقاف|تعليق|حجب|إغلاق|إنهاء) (هذا (الموقع|الحساب)|هذه (المدونة|القناة))",
    ),
    "database-error": (
        r"error establishing a database connection", r"database (connection )?error", r"mysql_connect",
        r"could not connect to (the )?database", r"you have an error in your sql syntax", r"warning: mysql",
        r"fatal error: .{0,80} on line \d+", r"parse error: .{0,80} on line \d+", r"internal server error",
        _NOTICE_LEAD + r"service (temporarily )?unavailable", r"bad gateway", r"gateway time-?out",
        r"server error in '.*' application", r"the request could not be satisfied",  # a CDN's (CloudFront's) error
        r"runtime error", r"too many connections", r"sql server error", r"odbc", r"stack trace",
        r"twitter is over capacity|^twitter / over capacity", r"this (content|page) is temporarily unavailable",
        r"خطأ في (الاتصال ب)?قاعدة البيانات",
    ),
    "under-construction": (
        _SAID_OF + r"under construction", _SAID_OF + r"coming soon", r"site (is )?(currently )?under maintenance",
        r"(currently )?down for maintenance", r"(currently )?undergoing (scheduled |planned )?maintenance",
        r"briefly unavailable for scheduled maintenance", r"maintenance mode", r"mantenimiento programado",
        r"maintenance en cours", r"wartungsmodus", r"en construcci[óo]n", r"en (cours de )?construction",
        r"im aufbau", r"in costruzione", r"default web (site )?page", r"it works!", r"welcome to nginx",
        r"apache2? (ubuntu |debian )?default page", r"test page for (the )?apache", r"index of /",
        r"iis windows server", r"web server is (running|working)", r"future home of",
        r"site (is )?not (yet )?configured",
        r"hello world!? this is your first post", r"just another wordpress site", r"estamos actualizando",
        r"pronto estaremos", r"em (construção|manutenção)", r"en mantenimiento", r"site en maintenance",
        r"wartungsarbeiten", r"yapım aşamasında", r"в разработке", r"сайт на реконструкции", r"قيد الإنشاء",
        r"تحت الإنشاء", r"in onderhoud", r"w budowie", r"we('ll| will) be back soon", r"new (web)?site (is )?coming",
        r"(الموقع|الصفحة) (تحت|قيد) (الصيانة|التطوير)", r"(الموقع|الصفحة) (مغلق|مغلقة|متوقف|متوقفة) (مؤقتا )?للصيانة",
        r"سنعود قريبًا",
    ),
    "bot-challenge": (
        r"checking (if the site connection is secure|your browser)", r"attention required!? \| cloudflare",
        r"just a moment\.\.\.", r"ddos protection by", r"are you a (human|robot)", r"verify you are (a )?human",
        r"enable (javascript and )?cookies to continue", r"captcha", _SAID_OF + r"access denied", r"403 forbidden",
        r"you don't have permission to access", r"request unsuccessful\. incapsula", r"pardon our interruption",
        r"unusual traffic from your computer", r"(تحقق|التحقق) من (أنك|انك) (إنسان|لست روبوت)",
        # the platforms' refusals of a client they do not serve: Facebook's "Update Your Browser" page to
        # crawlers' user agents (2010s), its temporary block, and the "unusual activity" screens
        r"(you're|you are) using a web browser that isn't supported", r"^update your browser \| facebook",
        r"(you're|you are) temporarily blocked", r"our systems have detected unusual (traffic|activity)",
    ),
    "defaced": (
        _SAID_OF + r"hacked by", r"h4ck3d", _SAID_OF + r"defaced by", _SAID_OF + r"owned by .{0,30} team",
        r"was here\b.{0,40}hack",
        r"greetz", r"security is (just )?an illusion",
    ),
}
# Phrases and pages are compared with their letters folded (watcher.text.fold_letters): Arabic is
# written with and without hamza, taa marbuta and alef maqsura dotted or not, harakat or tatweel.
# A phrase of Latin letters matches whole words: "sedo" is in "předsedou" (Czech, "chairman") and
# "sedot" (Indonesian), "dan.com" in "jordan.com"; gold's on-topic pages hold both (Arabic phrases
# keep no bound: its prefixes are written joined, "وهذا").
_COMPILED = {kind: re.compile("|".join(f"(?:{'(?<![a-z])' if p[0].isascii() and p[0].isalpha() else ''}"
                                       f"{fold_letters(p)}{'(?![a-z])' if p[-1].isascii() and p[-1].isalpha() else ''})"
                                       for p in pats), re.I)
             for kind, pats in _PHRASES.items()}


def _required_literal(pattern: str) -> str:
    """The longest run of plain characters every match of ``pattern`` holds (outside its groups,
    repeats and alternatives), case-folded; "" when the pattern is an alternation at its top."""
    best, run = "", []
    for op, arg in sre_parse.parse(pattern, re.I):
        if op is sre_constants.LITERAL:
            run.append(chr(arg))
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    if len(run) > len(best):
        best = "".join(run)
    return best.casefold()


@dataclass(frozen=True, slots=True)
class _Gate:
    """What a page's text must hold for a kind's pattern to be worth running (see _first): one of
    the literals its phrases require, or a match of the phrases that require none of 3 letters
    (an alternation, two Arabic words, "em (construção|manutenção)")."""

    literals: tuple[str, ...]
    rest: re.Pattern[str] | None

    def may_match(self, folded: str, joined: str) -> bool:
        return any(lit in folded for lit in self.literals) or (self.rest is not None
                                                                 and self.rest.search(joined) is not None)


def _gate(phrases: tuple[str, ...]) -> _Gate:
    literals, rest = [], []
    for p in phrases:
        lit = _required_literal(fold_letters(p))
        if len(lit.strip()) >= 3:
            literals.append(lit)
        else:
            rest.append(f"(?:{fold_letters(p)})")
    # ``^`` and ``$`` at each unit's ends over the joined units: every match in a unit is one there
    return _Gate(tuple(dict.fromkeys(literals)), re.compile("|".join(rest), re.I | re.M) if rest else None)


_GATES = {kind: _gate(pats) for kind, pats in _PHRASES.items()}
# Case folding that keeps a letter one letter: "İ" folds to "i" and a combining dot, which would hide
# the "i" of a phrase's literal that ``re.I`` matches.
_DOT_ABOVE = "\u0307"
# Order matters when several kinds match: the most specific first.
_ORDER = ("parked", "suspended", "defaced", "database-error", "bot-challenge", "soft-404", "login-wall",
          "under-construction")
SHORT_PAGE_WORDS = 250
# A unit (the title, a heading, a line of text) longer than this is prose: a phrase in it is a
# mention unless it opens the unit (within its first OPENS_WITHIN_WORDS words).  Every notice on
# the real pages here fits (gold's error pages: 2 to 8 words, or the phrase first: "This site is
# not available at the current time ..."; Fox News's "It seems you clicked on a bad link and
# stumbled upon our 404 page": 14), while gold's on-topic pages and the newspaper pages mention
# the phrases inside lines of 23 to 337 words, from their seventh word on.
PROSE_MAX_WORDS = 20
# A text of the page's own beside a notice: more prose than this outside the notice's block (and
# more than the block).  A soft 404's help under its notice is a sentence or two (gold's and the
# newspaper pages' error pages: none has prose beside the notice); a featured article's summary
# above a theme's empty loop is ~200 words, an article under a search box or a comment form more.
OWN_TEXT_MIN_WORDS = 60
OPENS_WITHIN_WORDS = 2
# A headline's kicker: the phrase, then a colon or a dash joined to it, then a headline of its own
# ("Access Denied- Thousands of Palestinians are being denied access to water" and "COMING SOON:
# Nov 28 to Dec 4" on gold's on-topic pages).  A notice names at most its site after the colon
# ("Page Not Found: Details", "Apache2 Default Page: It works").
KICKER_MIN_WORDS = 4
_KICKER = re.compile(r"^[:\-–—]+\s*")


# Typographic apostrophes read as the typewriter one, so every phrase is written with "'": Twitter's
# 404 says "Sorry, that page doesn’t exist!" with U+2019, which a phrase written with "'" missed.
# (Not in watcher.text's letter table: the tokeniser keeps both forms inside a word already.)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'"})


def _fold(unit: str) -> str:
    """A unit as the phrases are written: letters folded as the text is, one apostrophe."""
    return fold_letters(unit).translate(_APOSTROPHES)


@dataclass(frozen=True, slots=True)
class PageKind:
    kind: str
    evidence: str
    where: str  # "title", "heading" or "body"


def detect_page_kind(title: str, headings: tuple[str, ...] | list[str], text: str, word_count: int,
                     status: int | None = None) -> PageKind | None:
    """The off-topic page kind of a capture, or ``None``.

    ``status`` (the HTTP status, when known) settles soft errors: a 4xx/5xx
    capture is an error page whatever it says.
    """
    # the title whole and each of its parts ("wwhr | UNDER CONSTRUCTION": the notice opens its part)
    parts = title_segments(title)
    found = _first([_fold(u) for u in (title, *(parts if len(parts) > 1 else ()), *headings[:1])])
    if found:
        return PageKind(found[0], found[1], "title")
    # elsewhere a notice decides only when it is the page: no prose of the page's own beside it
    prose = _Prose(text)
    found = _first([_fold(u) for u in headings[1:4]], prose)
    if found:
        return PageKind(found[0], found[1], "title")
    if word_count <= SHORT_PAGE_WORDS:
        found = _first(_fold(text[:3000]).splitlines(), prose)
        if found:
            return PageKind(found[0], found[1], "body")
    if status is not None and status >= 400:
        kind = "soft-404" if status in (404, 410) else "database-error" if status >= 500 else "bot-challenge"
        return PageKind(kind, f"HTTP {status}", "status")
    return None


def _notice(unit: str, m: re.Match[str]) -> bool:
    """Whether the phrase ``m`` stands as a notice in ``unit``, not as words of a sentence (a
    prose line it does not open) or a headline's kicker (see the constants)."""
    words = unit.split()
    before = len(unit[:m.start()].split())
    if len(words) > PROSE_MAX_WORDS and before > OPENS_WITHIN_WORDS:
        return False
    after = unit[m.end():]
    kicker = _KICKER.match(after)
    return not (kicker and len(after[kicker.end():].split()) >= KICKER_MIN_WORDS)


class _Prose:
    """The word counts of a text's prose lines, counted when first asked for: most pages hold no
    phrase at all, and counting the words of every line cost as much as the phrase search."""

    __slots__ = ("_counts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._counts: list[int] | None = None

    def counts(self) -> list[int]:
        if self._counts is None:
            self._counts = [n for line in self._text.splitlines() if (n := len(line.split())) > PROSE_MAX_WORDS]
        return self._counts


def _holds_page(unit: str, prose: list[int]) -> bool:
    """Whether the notice's block ``unit`` holds most of the page's own text.  ``prose``: the word
    counts of the page's prose lines (longer than :data:`PROSE_MAX_WORDS`; menus, links and
    headings are shorter and are the site's furniture, not the page's text).  The prose outside the
    block must not outweigh it, or must be too little to be a text of its own
    (:data:`OWN_TEXT_MIN_WORDS`: the help under a notice, "Please check the URL ...")."""
    block = len(unit.split())
    own = sum(prose) - (block if block > PROSE_MAX_WORDS else 0)
    return own < OWN_TEXT_MIN_WORDS or own <= block


def _first(units: list[str], prose: _Prose | None = None) -> tuple[str, str] | None:
    """The first kind (in :data:`_ORDER`) with a phrase that stands as a notice in any unit, and
    the phrase; with ``prose`` (see :func:`_holds_page`), only in a unit that holds the page.

    A kind's pattern (an alternation of its phrases) runs only where the units hold one of the
    literals its phrases require (:class:`_Gate`): Python's ``re`` tries every phrase at every
    character, 1 ms a page for all kinds, a tenth of a capture's CPU, while a page without any
    phrase, most pages, costs a substring search per literal."""
    joined = "\n".join(units)
    folded = joined.casefold().replace(_DOT_ABOVE, "")
    for kind in _ORDER:
        if not _GATES[kind].may_match(folded, joined):
            continue
        pattern = _COMPILED[kind]
        for unit in units:
            for m in pattern.finditer(unit):
                if _notice(unit, m) and (prose is None or _holds_page(unit, prose.counts())):
                    return kind, m.group(0)[:80]
    return None
