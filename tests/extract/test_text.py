"""Script-aware normalisation and tokenisation (watcher/text.py), one small
string per script: the same word spelled two ways readers treat as one must
give one term, and a word must never split inside itself."""

from __future__ import annotations

import pytest

from watcher import lang
from watcher import text as tx
from watcher.fingerprint import terms_of, words


def test_arabic_orthographic_variants_meet() -> None:
    # alef forms, taa marbuta, alef maqsura, harakat, tatweel, hamza carriers
    a = tx.tokens("أحمد إلى مدرسة مُسْتَشْفَى القاهـــرة مسؤول")
    b = tx.tokens("احمد الي مدرسه مستشفي القاهرة مسئول")
    assert a == b == ["احمد", "الي", "مدرسه", "مستشفي", "القاهره", "مسءول"]


def test_arabic_light_stem_strips_article_proclitics_and_suffixes() -> None:
    assert tx.arabic_light_stem("والمدرسه") == "مدرس"
    assert tx.arabic_light_stem("بالقاهره") == "قاهر"
    assert tx.arabic_light_stem("المعلمون") == "معلم"
    assert tx.arabic_light_stem("وكتاب") == "كتاب"
    # a bare ب/ك/ف/ل is a root letter too often: kept
    assert tx.arabic_light_stem("بيت") == "بيت"
    assert tx.arabic_light_stem("لبنان") == "لبن"  # suffix -ان only; the ل stays
    # too short to strip: the rest must keep two letters
    assert tx.arabic_light_stem("ال") == "ال"
    assert tx.arabic_light_stem("ولد") == "ولد"


def test_arabic_stop_words_still_match_after_normalisation() -> None:
    stops = lang.stop_words("ar")
    assert "علي" in stops and "على" not in stops  # the list is normalised like the tokens
    terms = terms_of(words("ذهب على المختبرات في بالمسعفين", "ar"), "ar", stop=True, stem=False)
    assert terms == ["مختبر", "مسعف"]


def test_stop_list_cap_keeps_function_words_and_drops_topic_words() -> None:
    """The default cap keeps the head of each list (function words) and lets
    the topic words of long lists through: a news site's "Cairo" or
    "occupation", Persian's "asteroid", are what its captures share."""
    full, capped = lang.stop_words("ar"), lang.stop_words("ar", 200)
    assert capped < full and len(capped) <= 200 and len(full) > 2000
    for function_word in ("في", "من", "علي", "الذي"):
        assert function_word in capped
    for topic_word in ("القاهره", "الاحتلال", "الدستور"):  # normalised forms
        assert topic_word in full and topic_word not in capped
    assert "سيارك" in lang.stop_words("fa") and "سيارك" not in lang.stop_words("fa", 15)
    # English: the head of the list is the function words a curated list holds
    assert {"the", "of", "and", "which"} <= lang.stop_words("en", 200)
    terms = terms_of(words("Protests in Cairo against the occupation", "en"), "en", stop=True, stem=False,
                     stop_max=200)
    assert terms == ["protests", "cairo", "occupation"]
    sentence = words("مظاهرات في القاهرة ضد الاحتلال", "ar")
    assert terms_of(sentence, "ar", stop=True, stem=False, stop_max=200) == ["مظاهر", "قاهر", "احتلال"]
    assert terms_of(sentence, "ar", stop=True, stem=False, stop_max=0) == ["مظاهر"]  # the whole list


def test_persian_and_urdu_letter_variants_and_zwnj() -> None:
    # keheh/farsi yeh vs Arabic kaf/yeh; ZWNJ inside a word
    assert tx.tokens("کتاب یک") == tx.tokens("كتاب يك")
    assert tx.tokens("می\u200cخواهم") == ["ميخواهم"]
    # Persian morphology is not Arabic's: no light stemming for fa/ur
    assert terms_of(["كتابها"], "fa", stop=False, stem=False) == ["كتابها"]
    assert terms_of(["كتابها"], "ar", stop=False, stem=False) == ["كتاب"]


def test_hebrew_niqqud_removed() -> None:
    assert tx.tokens("שָׁלוֹם עוֹלָם") == tx.tokens("שלום עולם") == ["שלום", "עולם"]


@pytest.mark.parametrize(("s", "expected"), [
    ("বাংলাদেশের রাজধানী ঢাকা", ["বাংলাদেশের", "রাজধানী", "ঢাকা"]),  # Bengali vowel signs
    ("हिन्दी भाषा में", ["हिन्दी", "भाषा", "में"]),  # Devanagari virama, anusvara
    ("தமிழ் மொழி", ["தமிழ்", "மொழி"]),  # Tamil
])
def test_indic_words_do_not_split_at_vowel_signs(s: str, expected: list[str]) -> None:
    assert tx.tokens(s) == expected


def test_cjk_bigrams_and_kana() -> None:
    assert words("人权观察", None) == ["人权", "权观", "观察"]
    assert tx.tokens("日本語のテキスト") == ["日本", "本語", "語の", "のテ", "テキ", "キス", "スト"]
    assert tx.tokens("ｶﾀｶﾅ") == tx.tokens("カタカナ")  # NFKC: half-width kana


def test_thai_and_burmese_bigrams_keep_marks_with_their_base() -> None:
    thai = tx.tokens("ภาษาไทย")
    assert thai == ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]
    burmese = tx.tokens("မြန်မာဘာသာ")
    assert burmese == ["မြန်", "န်မာ", "မာဘာ", "ဘာသာ"]
    # no token is a lone combining mark
    assert not any(tx._MARK.match(t) for t in thai + burmese)


def test_latin_cyrillic_greek_case_folded_diacritics_kept() -> None:
    assert tx.tokens("Résumé RÉSUMÉ resume") == ["résumé", "résumé", "resume"]
    assert tx.tokens("Straße STRASSE") == ["strasse", "strasse"]
    assert tx.tokens("ΣΟΦΟΣ σοφος") == ["σοφοσ", "σοφοσ"]
    assert tx.tokens("Москва МОСКВА") == ["москва", "москва"]
    assert tx.tokens("ﬁnance") == ["finance"]  # NFKC ligature


def test_hangul_is_tokenised_as_words() -> None:
    assert tx.tokens("한국어 텍스트") == ["한국어", "텍스트"]


def test_numbers_and_one_letter_tokens_are_not_terms() -> None:
    assert terms_of(words("In 2012 a report ٢٠١٢ x", "en"), "en", stop=False, stem=False) == ["in", "report"]


def test_stop_lists_are_normalised_for_other_languages() -> None:
    assert "strasse" not in lang.stop_words("de") or "straße" not in lang.stop_words("de")
    assert all(t == tx.normalise(t) for t in list(lang.stop_words("de"))[:200])


def test_other_scripts_the_identifier_reports() -> None:
    # Armenian (cased), Georgian (uncased), Cyrillic Mongolian: plain words
    assert tx.tokens("Հայաստան ՀԱՅԱՍՏԱՆ") == ["հայաստան", "հայաստան"]
    assert tx.tokens("საქართველო") == ["საქართველო"]
    assert tx.tokens("Монгол Улс") == ["монгол", "улс"]


def test_mixed_arabic_latin_page_keeps_both() -> None:
    toks = tx.tokens("Français | العربيّة | Association Sahraouie الجمعيّة الصحراوية")
    assert toks == ["français", "العربيه", "association", "sahraouie", "الجمعيه", "الصحراويه"]
    # an unknown language code (the identifier said "ext") still gets Arabic light stemming
    assert terms_of(toks, "ext", stop=False, stem=False)[-2:] == ["جمع", "صحراو"]


def test_underscores_and_apostrophes() -> None:
    assert tx.tokens("snake_case l'homme don’t __x__") == ["snake", "case", "l'homme", "don’t", "x"]
