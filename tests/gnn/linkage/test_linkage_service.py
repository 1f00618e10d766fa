"""Sentence linkage end to end: the Task 1A folder interface, write-back into the graph, the service.

Uses the session's real encoder (tests/conftest.py) on a tiny hand-written CL-SciSumm folder and a
tiny graph; the linker is trained on the fly on the folder's own gold.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gnn.linkage import MODEL_METHOD, Linker, LinkerSettings, compute_linkage, fixed_scorer, score_task1a, train_linker
from gnn.linkage.corpus import load_gold_corpus
from gnn.linkage.service import LinkageService, LinkageUnavailable, linkage, make_predictor
from graph import GraphBatch, GraphStore, ingest
from graph.errors import ConfigError
from loaders.scisumm import TASK1A_COLUMNS, read_task1a_csv, write_task1a_csv
from loaders.task1a import (
    citance_text,
    format_offsets,
    link_folder,
    read_gold,
    read_reference,
    read_run,
    write_task_inputs,
)

RP_XML = """<PAPER>
<S sid="0" ssid="0">TnT -- A Statistical Part-of-Speech Tagger</S>
<ABSTRACT>
<S sid="1" ssid="1">Trigrams'n'Tags (TnT) is an efficient statistical part-of-speech tagger.</S>
<S sid="2" ssid="2">The tagger is trained on any corpus and any tagset.</S>
</ABSTRACT>
<SECTION title="2 Unknown words">
<S sid="3" ssid="1">Unknown words are handled by a suffix analysis of the word endings.</S>
<S sid="4" ssid="2">Smoothing uses linear interpolation of unigrams, bigrams and trigrams.</S>
</SECTION>
<SECTION title="3 Evaluation">
<S sid="5" ssid="1">The tagger achieves an accuracy of 96.7% on the Penn Treebank.</S>
<S sid="6" ssid="2">Training takes less than a second on a workstation.</S>
</SECTION>
</PAPER>
"""
ANNOTATIONS = [
    ("W00-1326", "['3']", "Unknown words were tagged with the suffix analysis of TnT (Brants, 2000).", "['3']"),
    ("W06-3120", "['8']", "TnT reaches 96.7% accuracy on the Penn Treebank (Brants, 2000).", "['5']"),
    ("P02-1001", "['2','3']", "We smooth trigram probabilities with linear interpolation as in TnT.", "['4']"),
    ("P03-1002", "['9']", "TnT (Brants, 2000) is an efficient statistical part-of-speech tagger.", "['1','0']"),
]


def write_training_folder(root: Path, rp: str = "A00-1031") -> Path:
    """A CL-SciSumm training folder with one RP: Reference_XML and gold .ann.txt lines."""
    folder = root / rp
    (folder / "Reference_XML").mkdir(parents=True)
    (folder / "Reference_XML" / f"{rp}.xml").write_text(RP_XML, encoding="utf-8")
    (folder / "annotation").mkdir()
    lines = []
    for number, (citing, offset, text, reference) in enumerate(ANNOTATIONS, start=1):
        lines.append(
            f"Citance Number: {number} | Reference Article:  {rp}.xml | Citing Article:  {citing}.xml | "
            f"Citation Marker Offset:  {offset} | Citation Marker:  Brants, 2000 | Citation Offset:  {offset} | "
            f'Citation Text:  <S sid ="{offset[2]}" ssid = "1">{text}</S> | Reference Offset:  {reference} | '
            f"Reference Text:  x | Discourse Facet:  Method_Citation | Annotator:  Ann |"
        )
    (folder / "annotation" / f"{rp}.ann.txt").write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def training(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_training_folder(tmp_path_factory.mktemp("training"))


@pytest.fixture(scope="module")
def linker(training: Path, encoder) -> Linker:  # type: ignore[no-untyped-def]
    gold = load_gold_corpus(training, encoder)
    return train_linker(gold.examples, LinkerSettings(inner_folds=1, k_values=(1, 2)))


def test_citance_text_and_offsets() -> None:
    field = '<S sid ="39" ssid = "19">Under this constraint,</S><S sid ="40" ssid = "20">(1996), Och &amp; al.</S>'
    assert citance_text(field) == "Under this constraint, (1996), Och & al."
    assert citance_text("plain text without tags") == "plain text without tags"
    assert format_offsets([90, 91]) == "'90','91'" and format_offsets([]) == ""


def test_task1a_csv_round_trip(tmp_path: Path) -> None:
    frame = pd.DataFrame([{c: "" for c in TASK1A_COLUMNS} for _ in range(2)])
    frame["Citance Number"] = ["1", "2"]
    frame["Citation Text"] = ['<S sid ="3">A "quoted", comma text</S>', "line\nbreak"]
    frame["Reference Offset"] = ["'90','91'", ""]
    frame["Reference Text"] = ['<S sid="90" ssid="1">x, y</S><S sid="91">z</S>', ""]
    path = tmp_path / "R.csv"
    write_task1a_csv(frame, path)
    again = read_task1a_csv(path)
    pd.testing.assert_frame_equal(again, frame[list(TASK1A_COLUMNS)])


def test_task_inputs_link_and_score(training: Path, tmp_path: Path, linker: Linker, encoder) -> None:  # type: ignore[no-untyped-def]
    inputs, run = tmp_path / "inputs", tmp_path / "run"
    assert write_task_inputs(training, inputs) == 4
    task = read_task1a_csv(inputs / "A00-1031" / "annotation" / "A00-1031.csv")
    assert (task["Reference Offset"] == "").all() and (task["Reference Text"] == "").all()
    # a row with no text, and a second RP without a Reference_XML: empty predictions, no crash
    task.loc[len(task)] = {
        **task.iloc[0].to_dict(),
        "Citance Number": "5",
        "Citation Text": "",
        "Citation Offset": "['99']",
    }
    write_task1a_csv(task, inputs / "A00-1031" / "annotation" / "A00-1031.csv")
    (inputs / "B00-0001" / "annotation").mkdir(parents=True)
    write_task1a_csv(
        task.assign(**{"Reference Article": "B00-0001"}), inputs / "B00-0001" / "annotation" / "B00-0001.csv"
    )

    report = link_folder(inputs, run, make_predictor(linker, encoder))
    assert (report.papers, report.citances, report.linked, report.warnings) == (2, 10, 4, 6)
    out = read_task1a_csv(run / "A00-1031.csv")
    assert list(out.columns) == list(TASK1A_COLUMNS) and len(out) == 5
    assert out["Citation Text"].tolist() == task["Citation Text"].tolist()  # inputs pass through
    first = out.iloc[0]
    assert first["Reference Offset"].startswith("'") and first["Reference Text"].startswith('<S sid="')
    sids = [int(s.strip("'")) for s in first["Reference Offset"].split(",")]
    reference = read_reference(inputs / "A00-1031")
    assert reference is not None and first["Reference Text"] == "".join(reference.element(s) for s in sids)
    assert 'ssid="1"' in reference.element(3)
    assert out.iloc[4]["Reference Offset"] == "" and out.iloc[4]["Reference Text"] == ""
    assert not list(run.glob("*.tmp")) and not list(run.glob(".*"))  # atomic: no temporary files left

    gold = read_gold(training)
    assert list(gold) == [("A00-1031", "Ann")]
    score = score_task1a(read_run(run), gold)  # type: ignore[arg-type]
    assert score.citances == 4 and score.micro.tp >= 3  # trained on these very citances


def test_link_cli_writes_the_run(training: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from api.cli.main import main

    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "bm25.json"
    fixed_scorer("bm25", 1).save(model)
    assert main(["-q", "linkage", "task-input", "--from", str(training), "--out", str(tmp_path / "in")]) == 0
    assert (
        main(
            ["-q", "link", "--scisumm-dir", str(tmp_path / "in"), "--out", str(tmp_path / "run"), "--model", str(model)]
        )
        == 0
    )
    out = read_task1a_csv(tmp_path / "run" / "A00-1031.csv")
    assert out["Reference Offset"].tolist()[0] == "'3'"  # BM25: "suffix analysis" + "unknown words"
    assert (
        main(
            [
                "-q",
                "link",
                "--scisumm-dir",
                str(tmp_path / "in"),
                "--out",
                str(tmp_path / "r2"),
                "--model",
                str(tmp_path / "none.json"),
            ]
        )
        == 1
    )


# ---------------------------------------------------------------------------------------------
# graph: write-back and the service


def linkage_batch() -> GraphBatch:
    """R1 has a full text (4 sentences); C1 cites it from two sentences; N1 is a paper without text."""
    papers = pd.DataFrame({"id": ["R1", "C1", "N1"], "title": ["Tagger", "Citing", "No text"]})
    texts = [
        "TnT -- A Statistical Part-of-Speech Tagger",
        "Unknown words are handled by a suffix analysis.",
        "The tagger achieves an accuracy of 96.7% on the Penn Treebank.",
        "Smoothing uses linear interpolation.",
    ]
    sentences = pd.DataFrame(
        {
            "id": [f"R1#{i}" for i in range(4)] + ["C1#5", "C1#c0123456789ab"],
            "paper_id": ["R1"] * 4 + ["C1", "C1"],
            "sid": pd.array([0, 1, 2, 3, 5, None], dtype="Int64"),
            "section": [None, "2 Method", "3 Evaluation", "2 Method", None, None],
            "text": [
                *texts,
                "Unknown words were tagged with TnT's suffix analysis.",
                "The tagger reaches 96.7% accuracy on the Treebank.",
            ],
        }
    )
    has = pd.DataFrame({"source": sentences["paper_id"], "target": sentences["id"]})
    mentions = pd.DataFrame({"source": ["C1#5", "C1#c0123456789ab"], "target": ["R1", "R1"]})
    links = pd.DataFrame(
        {"source": ["C1#5"], "target": ["R1#1"], "method": ["gold"], "annotator": ["Ann"], "score": [1.0]}
    )
    return GraphBatch(
        "linkage-test",
        nodes={"Paper": papers, "Sentence": sentences},
        rels={"HAS_SENTENCE": has, "MENTIONS": mentions, "LINKS_TO": links},
    )


@pytest.fixture
def graph(empty_store: GraphStore) -> GraphStore:
    ingest(empty_store, linkage_batch())
    return empty_store


def links_of(store: GraphStore) -> pd.DataFrame:
    return store.read_edges("LINKS_TO").sort_values(["method", "source", "target"], ignore_index=True)


def test_compute_linkage_is_idempotent_and_keeps_gold(graph: GraphStore, encoder) -> None:  # type: ignore[no-untyped-def]
    baseline = fixed_scorer("bm25", 1)
    first = compute_linkage(graph, encoder, baseline)
    assert (first.mentions, first.linkable, first.links, first.replaced, first.kept) == (2, 2, 2, 0, 1)
    links = links_of(graph)
    model = links[links["method"] == MODEL_METHOD]
    assert dict(zip(model["source"], model["target"])) == {"C1#5": "R1#1", "C1#c0123456789ab": "R1#2"}
    assert (
        model["score"].between(0, 1).all() and model["annotator"].fillna("").eq("").all()
    )  # identity nulls may read back as ""
    assert links[links["method"] == "gold"][["source", "target"]].values.tolist() == [["C1#5", "R1#1"]]
    second = compute_linkage(graph, encoder, baseline)
    assert (second.links, second.replaced, second.kept) == (2, 2, 1)
    pd.testing.assert_frame_equal(links_of(graph), links)
    # another linker replaces the model links instead of adding to them
    compute_linkage(graph, encoder, fixed_scorer("cosine", 2))
    after = links_of(graph)
    assert (after["method"] == MODEL_METHOD).sum() == 4 and (after["method"] == "gold").sum() == 1


def test_service_returns_scored_sentences_and_failure_values(graph: GraphStore, encoder, linker: Linker) -> None:  # type: ignore[no-untyped-def]
    service = LinkageService(graph, encoder, linker)
    result = linkage(service, "Unknown words were tagged with the suffix analysis of TnT.", "R1", k=3)
    assert not isinstance(result, LinkageUnavailable)
    assert next(s.id for s in result.sentences) == "R1#1" and len(result.sentences) == 3
    scores = [s.score for s in result.sentences]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    assert result.sentences[0].linked and result.sentences[0].section == "2 Method"
    assert np.isclose(
        service.linkage("Unknown words were tagged with the suffix analysis of TnT.", "R1", 3).sentences[0].score,
        scores[0],
    )

    no_text = service.linkage("anything", "N1")
    assert isinstance(no_text, LinkageUnavailable) and no_text.reason == "no_full_text"
    unknown = service.linkage("anything", "nope")
    assert isinstance(unknown, LinkageUnavailable) and unknown.reason == "unknown_paper"
    empty = service.linkage("   ", "R1")
    assert isinstance(empty, LinkageUnavailable) and empty.reason == "empty_citing_sentence"
    with pytest.raises(ConfigError, match="k is 0; ask for 1 to 50 sentences"):
        service.linkage("text", "R1", k=0)


def test_service_encodes_outside_the_store_lock(graph: GraphStore, encoder, linker: Linker) -> None:  # type: ignore[no-untyped-def]
    """Other API queries use the store while a paper or a citing sentence is being encoded."""
    import threading

    store_lock = threading.Lock()
    held: list[bool] = []

    class _Probe:
        def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
            self.inner = inner

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(self.inner, name)

        def encode(self, texts, **kwargs):  # type: ignore[no-untyped-def]
            held.append(store_lock.locked())
            return self.inner.encode(texts, **kwargs)

    service = LinkageService(graph, _Probe(encoder), linker, lock=store_lock)
    result = service.linkage("Unknown words were tagged with the suffix analysis of TnT.", "R1", k=2)
    assert not isinstance(result, LinkageUnavailable) and len(result.sentences) == 2
    assert held and not any(held)  # the paper's sentences and the citing sentence, both encoded unlocked


def test_service_with_a_cross_encoder_reorders_and_keeps_the_linkers_count(  # type: ignore[no-untyped-def]
    graph: GraphStore, encoder, linker: Linker, training: Path
) -> None:
    from gnn.linkage.cross_encoder import CrossEncodedLinker, CrossEncoderSettings, train_cross_encoder

    gold = load_gold_corpus(training, encoder)
    settings = CrossEncoderSettings(train_candidates=3, max_positives=1, rerank_candidates=3, device="cpu")
    cross = train_cross_encoder(gold.examples, linker, settings)
    service = LinkageService(graph, encoder, linker, cross_encoder=cross)
    text = "Unknown words were tagged with the suffix analysis of TnT."
    result = service.linkage(text, "R1", k=4)  # k above rerank_candidates: the top 4 are re-scored
    assert not isinstance(result, LinkageUnavailable) and len(result.sentences) == 4
    scores = [s.score for s in result.sentences]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)
    plain = service.linker.score(text, encoder.encode([text])[0], service._paper("R1"))  # type: ignore[arg-type]
    assert sum(s.linked for s in result.sentences) == len(linker.selection.select(plain))
    paper = service._paper("R1")
    assert paper
    expected = CrossEncodedLinker(linker, cross).link(text, encoder.encode([text])[0], paper)
    assert [s.sid for s in result.sentences if s.linked] == [sid for sid, _ in expected]
    # the write-back takes the re-ordered linker too; its scores stay on the 0..1 scale
    report = compute_linkage(graph, encoder, CrossEncodedLinker(linker, cross))
    model = graph.read_edges("LINKS_TO").query("method == @MODEL_METHOD")
    assert report.links == len(model) > 0 and model["score"].between(0, 1).all()


@pytest.mark.shared_data
def test_real_training_set_gold_and_inputs(data_dir: Path, tmp_path: Path) -> None:
    training = data_dir / "scisumm" / "Training-Set-2018"
    gold = read_gold(training)
    assert len({rp for rp, _ in gold}) == 40
    assert sum(len(c) for c in gold.values()) > 700
    assert write_task_inputs(training, tmp_path) > 700
    assert len(list(tmp_path.glob("*/annotation/*.csv"))) == 40


def test_cross_encoder_trains_saves_and_links_through_the_cli(
    training: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.cli.main import main

    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    data = tmp_path / "data"
    (data / "scisumm").mkdir(parents=True)
    (data / "scisumm" / "Training-Set-2018").symlink_to(training, target_is_directory=True)
    model, cross = tmp_path / "linker.json", tmp_path / "cross"
    args = ["-q", "linkage", "train", "--data", str(data), "--out", str(model), "--device", "cpu"]
    assert main([*args, "--cross-encoder", "--cross-encoder-epochs", "1", "--cross-encoder-out", str(cross)]) == 0
    assert (cross / "config.json").is_file() and (cross / "encoder").is_dir()
    assert main(["-q", "linkage", "task-input", "--from", str(training), "--out", str(tmp_path / "in")]) == 0
    link = ["-q", "link", "--scisumm-dir", str(tmp_path / "in"), "--model", str(model), "--cross-encoder"]
    assert main([*link, "--out", str(tmp_path / "run"), "--cross-encoder-model", str(cross)]) == 0
    out = read_task1a_csv(tmp_path / "run" / "A00-1031.csv")
    assert all(offset.startswith("'") for offset in out["Reference Offset"].tolist()[:4])
    # no cross-encoder at the default place: a clear data error (exit 65), no run folder
    assert main([*link, "--out", str(tmp_path / "r2")]) == 65
    assert not (tmp_path / "r2").exists()
