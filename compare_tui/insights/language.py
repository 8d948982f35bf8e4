"""Which language a text is in: a small deterministic detector, for answers in another language
than the request (`FailureCause.WRONG_LANGUAGE`).

Two readings, no model and no dependency:
- **script**: when at least `SCRIPT_SHARE` of the letters are of one non-Latin script, that
  script names the language (kana: Japanese; Han alone: Chinese; Hangul: Korean; Cyrillic,
  Greek, Arabic, Hebrew, Devanagari, Thai as scripts);
- **stop words** for Latin-script text in seven languages (English, German, French, Spanish,
  Italian, Portuguese, Dutch): each word found in a language's short list of its commonest
  function words counts for it (a few letters count too: `ß ä ö ü` German, `ñ ¿ ¡` Spanish,
  `ã õ` Portuguese). The leader must have at least `MIN_HITS` and `LEAD` times the runner-up.

Anything else is `None` (undecided), never a guess: a short answer (a label, a number, a JSON
object), a mix, another Latin-script language. Limits: closely related languages with few
function words in the text (Spanish and Portuguese, Dutch and German in a short sentence) may be
undecided; a text that quotes another language at length reads as that language; names of
people and products are words like any other.
"""

from __future__ import annotations

import re
from collections import Counter

SCRIPT_SHARE = 0.3
MIN_HITS = 3
LEAD = 1.5
WINDOW = 400
"""Characters read from the start of a text."""

LANGUAGE_NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "ja": "Japanese",
    "zh": "Chinese",
    "ko": "Korean",
    "cyrillic": "Cyrillic script",
    "greek": "Greek",
    "arabic": "Arabic script",
    "hebrew": "Hebrew",
    "devanagari": "Devanagari script",
    "thai": "Thai",
}
"""Every code `detect_language` returns, with its name for people."""

_STOP_WORDS = {
    "en": "the and is are of to that it you for with this be not have was your can will what please would "
    "there which from they been has how we our if",
    "de": "der die das und ist nicht ich sie es mit ein eine den dem zu auf für sind wir auch bitte ihre "
    "wird kann sich von wie noch nur oder aber haben werden",
    "fr": "le la les et est un une des du que pas pour vous nous avec dans ce sur il je votre sont qui au "
    "aux mais ou sera peut cette",
    "es": "el la los las y es un una que no por para con su del se lo está como pero usted muy sus al "
    "hay puede esta fue",
    "it": "il lo la gli le e è di che non per con una un sono della del questo si anche ma come più può nel alla",
    "pt": "o os as e é não um uma de que do da dos das em para com por você seu sua mas ao está foi pode",
    "nl": "de het een en is niet van in dat ik je op te met voor zijn er u uw maar ook wordt kunt bij naar",
}
_WORDS = {language: frozenset(words.split()) for language, words in _STOP_WORDS.items()}
_LANGUAGES_OF: dict[str, tuple[str, ...]] = {}
for _language, _words in _WORDS.items():
    for _word in _words:
        _LANGUAGES_OF[_word] = (*_LANGUAGES_OF.get(_word, ()), _language)
_LETTER_CUES = {"ß": "de", "ä": "de", "ö": "de", "ü": "de", "ñ": "es", "¿": "es", "¡": "es", "ã": "pt", "õ": "pt"}
_TOKEN = re.compile(r"[^\W\d_]+", re.UNICODE)

_SCRIPTS = (
    ("ja", ((0x3040, 0x30FF),)),  # hiragana, katakana
    ("ko", ((0xAC00, 0xD7AF), (0x1100, 0x11FF))),
    ("zh", ((0x4E00, 0x9FFF), (0x3400, 0x4DBF))),
    ("cyrillic", ((0x0400, 0x04FF),)),
    ("greek", ((0x0370, 0x03FF),)),
    ("arabic", ((0x0600, 0x06FF),)),
    ("hebrew", ((0x0590, 0x05FF),)),
    ("devanagari", ((0x0900, 0x097F),)),
    ("thai", ((0x0E00, 0x0E7F),)),
)


def _script(char: str) -> str | None:
    point = ord(char)
    if point < 0x0370:
        return None
    for name, ranges in _SCRIPTS:
        if any(low <= point <= high for low, high in ranges):
            return name
    return None


def detect_language(text: str) -> str | None:
    """The language of `text`'s first `WINDOW` characters (a `LANGUAGE_NAMES` code), or None
    when it cannot be told (see the module docstring). Pure and deterministic."""
    head = text[:WINDOW]
    if not head:
        return None
    if max(head) >= "\u0370":  # some character past Latin: count the scripts
        letters = [c for c in head if c.isalpha()]
        scripts = Counter(s for s in map(_script, letters) if s is not None)
        if scripts:
            # Japanese writes Han beside kana: any kana with Han makes it Japanese.
            if scripts["ja"] and scripts["zh"]:
                scripts["ja"] += scripts.pop("zh")
            name, count = scripts.most_common(1)[0]
            if count >= SCRIPT_SHARE * len(letters):
                return name
    hits: dict[str, int] = {}
    lowered = head.lower()
    languages_of = _LANGUAGES_OF
    for word in _TOKEN.findall(lowered):
        for language in languages_of.get(word, ()):
            hits[language] = hits.get(language, 0) + 1
    for char, language in _LETTER_CUES.items():
        if char in lowered:
            hits[language] = hits.get(language, 0) + 1
    if not hits:
        return None
    # Ties broken by the language's name, so the order words came in never matters.
    ranked = sorted(hits.items(), key=lambda item: (-item[1], item[0]))
    if ranked[0][1] < MIN_HITS or (len(ranked) > 1 and ranked[0][1] < LEAD * ranked[1][1]):
        return None
    return ranked[0][0]


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)
