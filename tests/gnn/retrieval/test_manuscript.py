"""Manuscript mode: the draft's query context and the candidates' sampled body sentences."""

from __future__ import annotations

from gnn.retrieval.manuscript import body_sampled_text, manuscript_context


def test_manuscript_context_is_fundamental_plus_seeded_earlier_sentences() -> None:
    draft = [f"s{i}." for i in range(10)]
    query = manuscript_context(draft, 6, supplemental=2, seed=3)
    assert query.startswith("s5. s6. s7.")
    extra = query.split()[3:]
    assert len(extra) == 2 and all(int(s[1:-1]) < 5 for s in extra)
    assert manuscript_context(draft, 6, supplemental=2, seed=3) == query  # seeded
    assert manuscript_context(draft, 0, supplemental=2) == "s0. s1."


def test_body_sampled_text_is_seeded_per_paper_and_keeps_reading_order() -> None:
    body = [f"b{i}." for i in range(10)]
    text = body_sampled_text("Title. Abstract.", body, sentences=3, seed=1, key="p1")
    assert text.startswith("Title. Abstract. ")
    chosen = text.removeprefix("Title. Abstract. ").split()
    assert len(chosen) == 3 and chosen == sorted(chosen, key=body.index)  # reading order
    assert body_sampled_text("Title. Abstract.", body, sentences=3, seed=1, key="p1") == text  # seeded
    others = {body_sampled_text("T.", body, sentences=3, seed=1, key=f"p{i}") for i in range(20)}
    assert len(others) > 1  # each paper draws its own sample
    assert body_sampled_text("T.", ["only."], sentences=5, seed=0, key="p") == "T. only."  # fewer than asked: all
    assert body_sampled_text("T.", body, sentences=0, seed=0, key="p") == "T."
