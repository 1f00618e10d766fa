"""The text encoder: agreement with sentence-transformers, normalisation, order independence, the cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from gnn.text.encoder import EmbeddingCache, EncoderSettings, TextEncoder, encoder_dtype
from graph.errors import ConfigError

TEXTS = [
    "Graph neural networks for citation recommendation.",
    "We align words with a hidden Markov model.",
    "short",
    "Hyperbolic embeddings preserve hierarchies " * 40,  # longer than max_length: truncated
    "",
]


def test_vectors_are_unit_length_and_match_sentence_transformers(encoder: TextEncoder) -> None:
    vectors = encoder.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sentence_transformers = pytest.importorskip("sentence_transformers")
    reference = sentence_transformers.SentenceTransformer(encoder.settings.model, device="cpu")
    expected = reference.encode(TEXTS, normalize_embeddings=True)
    np.testing.assert_allclose(vectors, expected, atol=1e-5)


def test_order_and_duplicates_do_not_change_vectors(encoder: TextEncoder) -> None:
    forward = encoder.encode(TEXTS)
    backward = encoder.encode(TEXTS[::-1] + TEXTS[:2])
    np.testing.assert_allclose(backward[: len(TEXTS)][::-1], forward, atol=1e-5)
    np.testing.assert_allclose(backward[len(TEXTS) :], forward[:2], atol=1e-5)
    related = float(forward[0] @ encoder.encode(["Recommending citations with graph networks."])[0])
    unrelated = float(forward[0] @ encoder.encode(["The recipe needs two eggs and flour."])[0])
    assert related > unrelated + 0.3


def test_many_chunks_tokenised_ahead_give_the_same_vectors(
    encoder: TextEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks of 3 texts, tokenised by the worker thread while the one before runs, land in their places.

    The worker thread is the CUDA path; here it runs on the CPU with the same hand-over of chunks.
    """
    texts = [f"{'dependency parsing ' * (i % 7)}sentence {i} about topic {i % 3}" for i in range(23)]
    one_chunk = encoder.encode(texts)
    monkeypatch.setattr(TextEncoder, "CHUNK", 3)
    np.testing.assert_allclose(encoder.encode(texts), one_chunk, atol=1e-5)
    monkeypatch.setattr(encoder, "tokenise_ahead", True)
    np.testing.assert_allclose(encoder.encode(texts), one_chunk, atol=1e-5)
    alone = np.vstack([encoder.encode([text]) for text in texts[:4]])
    np.testing.assert_allclose(one_chunk[:4], alone, atol=1e-5)


def test_cache_serves_repeats_without_the_model(tmp_path: Path, encoder: TextEncoder) -> None:
    settings = EncoderSettings(encoder.settings.model, batch_size=4, device="cpu", cache_dir=tmp_path)
    first = TextEncoder(settings)
    texts = [f"paper number {i} on parsing" for i in range(10)]
    a = first.encode(texts)
    assert first.encoded == 10
    first.close()
    second = TextEncoder(settings)  # a new process would see the same file
    b = second.encode([*texts, "one new text"])
    assert second.encoded == 1
    np.testing.assert_array_equal(a, b[:10])
    assert len(second.cache) == 11  # type: ignore[arg-type]
    second.close()


def test_cache_key_depends_on_max_length(encoder: TextEncoder, tmp_path: Path) -> None:
    other = TextEncoder(EncoderSettings(encoder.settings.model, max_length=32, device="cpu", cache_dir=tmp_path))
    assert other.fingerprint != encoder.fingerprint
    assert other.text_hash("same text") != encoder.text_hash("same text")
    other.close()


def test_cache_keys_do_not_depend_on_where_the_weights_are(encoder: TextEncoder, tmp_path: Path) -> None:
    """The same weights copied into another folder (another checkout's virtual environment) give the same keys."""
    copy = tmp_path / "elsewhere" / "model"
    shutil.copytree(encoder.settings.model, copy)
    moved = TextEncoder(EncoderSettings(str(copy), device="cpu"))
    assert moved.fingerprint == encoder.fingerprint
    assert moved.text_hash("same text") == encoder.text_hash("same text")


def test_cache_ignores_vectors_of_the_wrong_size(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite", dim=4)
    cache.put_many([b"a", b"b"], np.ones((2, 4), dtype=np.float32))
    cache._db.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?)", (b"b", np.ones(3, np.float32).tobytes()))
    found = cache.get_many([b"a", b"b", b"c"])
    assert set(found) == {b"a"}
    cache.close()


def test_bfloat16_vectors_agree_with_fp32_within_the_stated_tolerance(encoder: TextEncoder) -> None:
    """bfloat16 weights (the CPU default where AMX or AVX-512 BF16 multiplies it) against the fp32 encoder."""
    bf16 = TextEncoder(EncoderSettings(encoder.settings.model, batch_size=4, device="cpu", precision="bf16"))
    assert bf16.dtype == torch.bfloat16
    vectors, reference = bf16.encode(TEXTS), encoder.encode(TEXTS)
    assert vectors.dtype == np.float32
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() >= 0.9995, cosines


def test_auto_precision_follows_the_hardware() -> None:
    cpu = torch.device("cpu")
    native_bf16 = torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()
    assert encoder_dtype("auto", cpu) == (torch.bfloat16 if native_bf16 else torch.float32)
    assert encoder_dtype("fp32", cpu) == torch.float32
    assert encoder_dtype("auto", torch.device("cuda")) == torch.float16
    with pytest.raises(ConfigError, match="fp16 needs a CUDA device"):
        encoder_dtype("fp16", cpu)
    with pytest.raises(ConfigError, match="CITEGRAPH_ENCODER_PRECISION"):
        EncoderSettings("x", precision="int4")


def test_empty_input(encoder: TextEncoder) -> None:
    assert encoder.encode([]).shape == (0, 384)


def test_bad_settings_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_length"):
        EncoderSettings("x", max_length=2)
    with pytest.raises(ConfigError, match="CITEGRAPH_ENCODER"):
        TextEncoder(EncoderSettings(str(tmp_path / "no-such-model"), device="cpu"))


def test_the_configured_encoder_is_read_from_one_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from gnn.text.encoder import configured_encoder, describe_record, served_description

    monkeypatch.setenv("CITEGRAPH_ENCODER", "")
    assert configured_encoder() is None
    monkeypatch.setenv("CITEGRAPH_ENCODER", "/models/scincl")
    assert configured_encoder() == "/models/scincl"
    assert served_description(None)["model"] == describe_record("/models/scincl", None)["model"]
