"""The insights' language detector (`compare_tui.insights.language`): real sentences in each
language it knows, undecided on what it cannot tell, properties under Hypothesis, and an answer
in another language than the request grouped as such through a real `run`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compare_tui.cli import main
from compare_tui.insights import FailedAttempt, classify
from compare_tui.insights.language import _WORDS, LANGUAGE_NAMES, MIN_HITS, detect_language
from compare_tui.vocabulary import FailureCause, Outcome
from tests.core.test_insights import CATALOGUE
from tests.support.builders import write_set
from tests.support.fake_openai import FakeServer, text

SENTENCES = {
    "en": "Your invoice was charged twice, and we will refund the amount to your card within five days.",
    "de": "Ihre Rechnung wurde doppelt belastet. Wir erstatten den Betrag in den nächsten Tagen auf Ihre Karte.",
    "fr": "Votre facture a été débitée deux fois et nous allons rembourser le montant sur votre carte.",
    "es": "Su factura se cobró dos veces y le devolveremos el importe a su tarjeta en cinco días.",
    "it": "La sua fattura è stata addebitata due volte e le rimborseremo l'importo sulla carta di credito.",
    "pt": "A sua fatura foi cobrada duas vezes e vamos reembolsar o valor no seu cartão em cinco dias.",
    "nl": "Uw factuur is twee keer afgeschreven en we storten het bedrag binnen vijf dagen terug op uw kaart.",
    "cyrillic": "Ваш счёт был списан дважды, мы вернём деньги на карту в течение пяти дней.",
    "zh": "您的账单被扣了两次，我们会在五天内退款到您的卡上。",
    "ja": "お支払いが二重になっています。五日以内にカードへ返金いたします。",
    "ko": "결제가 두 번 되었습니다. 5일 이내에 환불해 드리겠습니다.",
    "greek": "Ο λογαριασμός σας χρεώθηκε δύο φορές και θα σας επιστρέψουμε το ποσό.",
    "arabic": "تم خصم فاتورتك مرتين وسنعيد المبلغ إلى بطاقتك خلال خمسة أيام.",
}


@pytest.mark.parametrize("language", sorted(SENTENCES))
def test_a_real_sentence_is_read_as_its_language(language: str) -> None:
    assert detect_language(SENTENCES[language]) == language
    assert language in LANGUAGE_NAMES


@pytest.mark.parametrize(
    "answer",
    ["billing", '{"label": "billing"}', "42", "", "OK, done", "Classify the ticket: Meine Rechnung ist falsch"],
)
def test_what_cannot_be_told_is_undecided(answer: str) -> None:
    assert detect_language(answer) is None


def _only(language: str) -> list[str]:
    """The stop words of `language` that no other language lists."""
    others = set().union(*(w for other, w in _WORDS.items() if other != language))
    return sorted(_WORDS[language] - others)


_NEUTRAL = st.sampled_from(["42", "—", "#17", "3.5", "(", ")", ":", "2026-12-07", "…"])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_enough_words_only_one_language_lists_decide_it_whatever_sits_between(data) -> None:
    language = data.draw(st.sampled_from(sorted(_WORDS)))
    words = data.draw(st.lists(st.sampled_from(_only(language)), min_size=MIN_HITS, max_size=12))
    noise = data.draw(st.lists(_NEUTRAL, min_size=len(words), max_size=len(words)))
    sentence = " ".join(f"{w} {n}" for w, n in zip(words, noise, strict=True))
    assert detect_language(sentence) == language
    assert detect_language(sentence.upper()) == language  # case is not read


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_a_known_code_or_none_and_the_same_twice(sample: str) -> None:
    found = detect_language(sample)
    assert found is None or found in LANGUAGE_NAMES
    assert detect_language(sample) == found


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x0430, max_codepoint=0x044F), min_size=3, max_size=60))
def test_cyrillic_letters_are_read_as_the_cyrillic_script(word: str) -> None:
    assert detect_language(f"{word} ok") == "cyrillic"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_only("en")), max_size=MIN_HITS - 1))
def test_fewer_than_the_minimum_of_stop_words_is_undecided(words: list[str]) -> None:
    assert detect_language(" ".join(["Kundennummer", *words, "4711"])) is None


def test_classify_names_the_two_languages_and_needs_both() -> None:
    def cause(answer: str, asked: str | None) -> tuple[FailureCause, str]:
        found = classify(FailedAttempt("t", 1, Outcome.FAIL, "exact", answer, request_language=asked))
        return found.kind, found.label

    assert cause(SENTENCES["en"], "de") == (FailureCause.WRONG_LANGUAGE, "asked in German, answered in English")
    assert cause(SENTENCES["de"], "de")[0] is FailureCause.OTHER  # the same language: the scorer's cause
    assert cause(SENTENCES["en"], None)[0] is FailureCause.OTHER  # the request's language unknown
    assert cause("billing", "de")[0] is FailureCause.OTHER  # a label is no language
    refusal = "I'm sorry, but I can't help with that request, it is against the policy of this shop."
    assert cause(refusal, "de")[0] is FailureCause.REFUSAL  # a refusal is named first


GERMAN_PROMPT = "Meine Rechnung wurde doppelt belastet, bitte erstatten Sie mir den Betrag auf die Karte."
ANSWERS = {
    "fake-a": "Wir erstatten den Betrag.",
    "fake-b": "We will refund the amount to your card, and you will see it within five days.",
}


def test_an_english_answer_to_a_german_request_is_grouped_through_a_real_run(tmp_path: Path, capsys) -> None:
    def script(body: dict, count: int):
        return text(ANSWERS[body["model"]])

    with FakeServer(script) as server:
        goldset = write_set(
            tmp_path / "set",
            {"refund-de": "Wir erstatten den Betrag.", "refund-en": "We refund."},
            extra={"refund-de": {"input": {"prompt": GERMAN_PROMPT}}},
            max_tokens=64,
        )
        models = tmp_path / "models.toml"
        models.write_text(
            "\n".join(CATALOGUE.format(name=n, url=server.url, zeros="0" * 64) for n in ("fake-a", "fake-b"))
        )
        store = tmp_path / "runs.sqlite"
        args = ["run", str(goldset), "--models", str(models), "--store", str(store)]
        assert main([*args, "--model", "fake-a", "--model", "fake-b", "--baseline", "fake-a"]) == 0
    capsys.readouterr()
    assert main(["insights", "latest", "--store", str(store), "--format", "json"]) == 0
    groups = {g["cause"]: g for g in json.loads(capsys.readouterr().out)["groups"]}
    wrong = groups["wrong_language"]
    assert (wrong["label"], wrong["examples"], wrong["counts"]) == (
        "asked in German, answered in English",
        ["refund-de"],
        {"fake-a": 0, "fake-b": 1},
    )
    # refund-en's prompt is its id (no language): its failures stay the scorer's.
    assert "wrong_language" not in {g["cause"] for g in groups.values() if "refund-en" in g["examples"]}


def test_a_sampled_sets_logged_replies_show_the_problems_found_in_the_traffic(tmp_path: Path, capsys) -> None:
    """The set's expected texts are the logged model's replies (as `compare-tui sample` writes
    them); `sample.json` counts what the sampler skipped. A run of one model on it is enough."""
    logged = {
        "t-refused": ("Can you cancel my order 4411?", "I'm sorry, but I can't help with that."),
        "t-german": (SENTENCES["en"], SENTENCES["de"]),
        "t-fine": ("Where is my parcel? It was due on Monday, and it has not come.", SENTENCES["en"]),
    }
    goldset = write_set(
        tmp_path / "set",
        {task: reply for task, (_, reply) in logged.items()},
        extra={task: {"input": {"prompt": asked}} for task, (asked, _) in logged.items()},
    )
    skipped = {"truncated_reply": {"count": 4, "meaning": "cut", "first": "a:1"}, "blank": {"count": 9}}
    (goldset / "sample.json").write_text(json.dumps({"format": 1, "skipped": skipped}))
    with FakeServer(lambda body, count: text("ok")) as server:
        models = tmp_path / "models.toml"
        models.write_text(CATALOGUE.format(name="fake-a", url=server.url, zeros="0" * 64))
        store = tmp_path / "runs.sqlite"
        assert main(["run", str(goldset), "--models", str(models), "--store", str(store), "--model", "fake-a"]) == 0
    capsys.readouterr()
    assert main(["insights", "latest", "--store", str(store), "--format", "json"]) == 0
    traffic = json.loads(capsys.readouterr().out)["traffic"]
    assert traffic == {
        "sampled": 3,
        "problems": [
            {"kind": "refusal", "words": "refusals", "count": 1, "examples": ["t-refused"]},
            {
                "kind": "wrong_language",
                "words": "replies in German to requests in English",
                "count": 1,
                "examples": ["t-german"],
            },
            {
                "kind": "truncated_reply",
                "words": "replies cut at the token limit (skipped by the sampler)",
                "count": 4,
                "examples": [],
            },
        ],
    }
    assert main(["insights", "latest", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "Problems found in the traffic (the logged model's own replies, before any" in out
    assert "  refusals: 1 of 3 sampled replies, e.g. t-refused" in out
