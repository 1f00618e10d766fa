"""`citegraph fetch-data` (loaders.fetch): pinned downloads, verification, atomic install, fail-fast offline.

Every test talks only to 127.0.0.1: a local http.server serves fixture files and GitHub-like archives in
the mirror layout (``<host>/<path>`` of the pinned URLs), and the opener ignores proxy settings.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import shutil
import socket
import tarfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.errors import CitegraphError, ConfigError
from loaders import SOURCES
from loaders.fetch import (
    ChecksumError,
    FetchError,
    Manifest,
    SourceUnreachableError,
    acl_year,
    cache_path,
    fetch_data,
    filter_annotations,
    filter_citing_sentences,
    load_manifest,
    mirrored,
    tree_digest,
    verify,
)

OPEN = urllib.request.build_opener(urllib.request.ProxyHandler({})).open  # never a proxy: 127.0.0.1 only
C_RAW = "a" * 40  # fixture commits (the fixtures are not real repositories)
C_TREE = "b" * 40
C_NET = "c" * 40
RAW_URL = f"https://raw.githubusercontent.com/example/demo/{C_RAW}"
TREE_URL = f"https://github.com/example/corpus/archive/{C_TREE}.tar.gz"
NET_URL = f"https://github.com/example/corpus/archive/{C_NET}.tar.gz"

RAW_FILES = {"a.json": b'{"x": 1}\n', "b.txt": b"plain text\n"}

# A CL-SciSumm-like topic tree, as the loaders expect it (the verbatim part of the repository archive).
TREE = {
    "RP1/Reference_XML/RP1.xml": b'<PAPER><S sid="1">One.</S></PAPER>\n',
    "RP1/Citance_XML/C1.xml": b'<PAPER><S sid="1">Cites RP1.</S></PAPER>\n',
    "RP1/annotation/RP1.ann.txt": b"Citance Number: 1 | Citing Article:  C1.txt | Annotator: A |\n\n\n",
    "RP2/Reference_XML/RP2.xml": b'<PAPER><S sid="1">Two.</S></PAPER>\n',
    "RP2/annotation/RP2.annv3.txt": b"Citance Number: 1 | Citing Article:  C2.txt |\n",
}
TREE_NOT_TAKEN = {
    "RP1/Documents_PDF/C1.pdf": b"%PDF-1.4",  # another folder of the topic
    "RP2/annotation/RP2.ann.txt": b"an older annotation, not in the manifest's file list\n",
    "RP9/Reference_XML/RP9.xml": b"<PAPER/>\n",  # a topic the manifest does not list
}


def upstream_json(records: list[dict]) -> bytes:
    """ScisummNet's upstream style: Python 2 ``json.dump(indent=2)`` (trailing ', ' at line ends)."""
    return json.dumps(records, indent=2, separators=(", ", ": ")).encode()


def ann(number: int, citing: str, text: str) -> str:
    return (
        f"Citance Number: {number} | Reference Article:  R.txt | Citing Article:  {citing}.txt | Citation Marker "
        f"Offset:  NA | Citation Text:  <S sid =  ssid = >{text}</S> | Reference Offset:  ['3'] | Annotator: Automatic"
    )


NET_RECORDS = [
    {"citance_No": 1, "citing_paper_id": "P14-2118", "raw_text": "Late (X, 2000)", "keep_for_gold": 1},
    {"citance_No": 2, "citing_paper_id": "C04-1145", "raw_text": "Tagger (X, 2000) – fast", "keep_for_gold": 0},
    {"citance_No": 3, "citing_paper_id": "W11-2701", "raw_text": "Last kept (X, 2000)", "keep_for_gold": 1},
]
NET_UPSTREAM = {
    "N00-1001/Reference_XML/N00-1001.xml": b'<PAPER>\n  <S sid="0">Title</S>\n</PAPER>\n',
    "N00-1001/summary/N00-1001.abstract.txt": b"An abstract.\n",
    "N00-1001/summary/N00-1001.scisummnet_human.txt": b"A summary.\n",
    "N00-1001/citing_sentences.json": upstream_json(NET_RECORDS),
    "N00-1001/annotation/N00-1001.ann.txt": "".join(
        ann(r["citance_No"], r["citing_paper_id"], r["raw_text"]) + "\n\n\n" for r in NET_RECORDS
    ).encode(),
    "N00-1002/Reference_XML/N00-1002.xml": b"<PAPER/>\n",
    "N00-1002/summary/N00-1002.abstract.txt": b"Abstract two.\n",
    "N00-1002/summary/N00-1002.scisummnet_human.txt": b"Summary two.\n",
    "N00-1002/citing_sentences.json": upstream_json([{"citance_No": 1, "citing_paper_id": "N12-1047"}]),
    "N00-1002/annotation/N00-1002.ann.txt": (ann(1, "N12-1047", "Too late") + "\n\n\n").encode(),
}
NET_NOT_TAKEN = {
    "N00-1001/annotation/N00-1001.annv2.txt": b"old\n",
    "N00-1003/Reference_XML/N00-1003.xml": b"<PAPER/>\n",  # a paper the manifest leaves out
}
# What the loaders get: citing papers up to 2011, JSON with indent=1 and no final newline, one blank line
# between annotation records and a final newline (a paper left without records: one newline).
NET_EXPECTED = {
    **{k: v for k, v in NET_UPSTREAM.items() if not k.endswith((".json", ".ann.txt"))},
    "N00-1001/citing_sentences.json": json.dumps(NET_RECORDS[1:], indent=1, ensure_ascii=False).encode(),
    "N00-1001/annotation/N00-1001.ann.txt": (
        ann(2, "C04-1145", "Tagger (X, 2000) – fast") + "\n\n" + ann(3, "W11-2701", "Last kept (X, 2000)") + "\n"
    ).encode(),
    "N00-1002/citing_sentences.json": b"[]",
    "N00-1002/annotation/N00-1002.ann.txt": b"\n",
}
MANUAL = b"a derived file nobody can download\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def digests(tmp: Path, files: dict[str, bytes]) -> dict[str, str]:
    root = write_tree(tmp, files)
    return {top: tree_digest(root, top) for top in sorted({rel.split("/")[0] for rel in files})}


def github_archive(path: Path, repo: str, commit: str, prefix: str, files: dict[str, bytes]) -> None:
    """A tar.gz laid out like GitHub's ``archive/<commit>.tar.gz``: ``<repo>-<commit>/<path in repo>``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for rel, data in {"README.md": b"# corpus\n", **{f"{prefix}/{k}": v for k, v in files.items()}}.items():
            info = tarfile.TarInfo(f"{repo}-{commit}/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.fixture
def mirror_dir(tmp_path: Path) -> Path:
    """The files a mirror serves, at ``<host>/<path>`` of the pinned URLs."""
    root = tmp_path / "mirror"
    for name, data in RAW_FILES.items():
        write_tree(root, {f"raw.githubusercontent.com/example/demo/{C_RAW}/{name}": data})
    github_archive(
        root / f"github.com/example/corpus/archive/{C_TREE}.tar.gz",
        "corpus",
        C_TREE,
        "data/Set",
        {**TREE, **TREE_NOT_TAKEN},
    )
    github_archive(
        root / f"github.com/example/corpus/archive/{C_NET}.tar.gz",
        "corpus",
        C_NET,
        "data/Net",
        {**NET_UPSTREAM, **NET_NOT_TAKEN},
    )
    return root


@pytest.fixture
def manifest(tmp_path: Path) -> Manifest:
    return Manifest.from_dict(
        {
            "sources": {
                "files": [
                    {
                        "path": f"demo/{name}",
                        "how": "raw",
                        "repo": "example/demo",
                        "commit": C_RAW,
                        "upstream_path": name,
                        "url": f"{RAW_URL}/{name}",
                        "sha256": sha(data),
                    }
                    for name, data in RAW_FILES.items()
                ]
                + [{"path": "demo/derived.json", "how": "manual", "sha256": sha(MANUAL), "reason": "derived"}],
                "tree": [
                    {
                        "path": "corpus/Set",
                        "how": "tree",
                        "repo": "example/corpus",
                        "commit": C_TREE,
                        "url": TREE_URL,
                        "upstream_path": "data/Set",
                        "files": sorted(TREE),
                        "digests": digests(tmp_path / "expected-tree", TREE),
                    }
                ],
                "net": [
                    {
                        "path": "corpus/Net",
                        "how": "scisummnet",
                        "repo": "example/corpus",
                        "commit": C_NET,
                        "url": NET_URL,
                        "upstream_path": "data/Net",
                        "max_citing_year": 2011,
                        "digests": digests(tmp_path / "expected-net", NET_EXPECTED),
                    }
                ],
            }
        }
    )


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep the test output clean
        pass


@pytest.fixture
def server(mirror_dir: Path) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 serving ``mirror_dir``; yields its base URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=mirror_dir))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def no_network(url: str, timeout: float) -> None:
    raise AssertionError(f"network used for {url}")


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) if root.exists() else []


def fetch(dest: Path, manifest: Manifest, server: str, cache: Path, **kwargs: object):
    return fetch_data(dest, mirror=server, cache_dir=cache, opener=OPEN, manifest=manifest, **kwargs)


# --- the success path ------------------------------------------------------------------------------
def test_fetch_installs_the_layout_and_a_second_run_skips(tmp_path: Path, manifest: Manifest, server: str) -> None:
    dest, cache = tmp_path / "data", tmp_path / "cache"
    report = fetch(dest, manifest, server, cache)

    assert report.fetched == ["demo/a.json", "demo/b.txt", "corpus/Set", "corpus/Net"]
    assert [path for path, _ in report.manual] == ["demo/derived.json"]
    assert "not downloadable (derived)" in report.manual[0][1] and "shared/data" in report.manual[0][1]
    assert not report.complete
    for name, data in RAW_FILES.items():
        assert (dest / "demo" / name).read_bytes() == data
    assert files_under(dest / "corpus/Set") == sorted(TREE)  # PDFs, old annotations, unlisted topics left out
    for rel, data in TREE.items():
        assert (dest / "corpus/Set" / rel).read_bytes() == data
    assert files_under(dest / "corpus/Net") == sorted(NET_EXPECTED)
    for rel, data in NET_EXPECTED.items():
        assert (dest / "corpus/Net" / rel).read_bytes() == data, rel
    assert not [p for p in dest.iterdir() if p.name.startswith(".citegraph-fetch-")]  # no staging left

    again = fetch_data(dest, cache_dir=cache, opener=no_network, manifest=manifest)
    assert again.fetched == []
    assert again.present == ["demo/a.json", "demo/b.txt", "corpus/Set", "corpus/Net"]
    assert "0 fetched, 4 already present, 1 to copy by hand" in again.summary()
    assert json.loads(json.dumps(again.as_dict()))["complete"] is False


def test_downloads_are_cached_in_the_mirror_layout(tmp_path: Path, manifest: Manifest, server: str) -> None:
    cache = tmp_path / "cache"
    fetch(tmp_path / "one", manifest, server, cache)
    assert (cache / f"raw.githubusercontent.com/example/demo/{C_RAW}/a.json").read_bytes() == RAW_FILES["a.json"]
    assert cache_path(cache, TREE_URL).is_file()
    assert not list(cache.rglob("*.part"))

    report = fetch_data(tmp_path / "two", cache_dir=cache, opener=no_network, manifest=manifest)  # from the cache
    assert report.fetched == ["demo/a.json", "demo/b.txt", "corpus/Set", "corpus/Net"]

    # the cache itself is a mirror: another machine can serve it
    assert (
        mirrored(TREE_URL, "http://host:8000/") == f"http://host:8000/github.com/example/corpus/archive/{C_TREE}.tar.gz"
    )


def test_manual_entry_present_and_verified_counts_as_present(tmp_path: Path, manifest: Manifest, server: str) -> None:
    dest = write_tree(tmp_path / "data", {"demo/derived.json": MANUAL})
    report = fetch(dest, manifest, server, tmp_path / "cache", sources=["files"])
    assert report.present == ["demo/derived.json"] and report.complete

    (dest / "demo/derived.json").write_bytes(b"edited\n")
    report = fetch_data(dest, ["files"], cache_dir=tmp_path / "cache", opener=no_network, manifest=manifest)
    assert report.manual[0][0] == "demo/derived.json" and "differs from the pinned copy" in report.manual[0][1]


def test_partial_source_list(tmp_path: Path, manifest: Manifest, server: str) -> None:
    dest = tmp_path / "data"
    report = fetch(dest, manifest, server, tmp_path / "cache", sources=["tree"])
    assert report.fetched == ["corpus/Set"] and report.manual == []
    assert sorted(p.name for p in dest.iterdir()) == ["corpus"]
    assert sorted(p.name for p in (dest / "corpus").iterdir()) == ["Set"]


def test_unknown_source_is_a_config_error(tmp_path: Path, manifest: Manifest) -> None:
    with pytest.raises(ConfigError, match=r"unknown source\(s\) 'nope'.*known: files, tree, net"):
        fetch_data(tmp_path, ["nope"], opener=no_network, manifest=manifest)


# --- failures leave nothing behind -----------------------------------------------------------------
def test_checksum_mismatch_of_a_raw_file(tmp_path: Path, manifest: Manifest, mirror_dir: Path, server: str) -> None:
    (mirror_dir / f"raw.githubusercontent.com/example/demo/{C_RAW}/b.txt").write_bytes(b"changed upstream\n")
    dest = tmp_path / "data"
    with pytest.raises(ChecksumError) as info:
        fetch(dest, manifest, server, tmp_path / "cache", sources=["files"])
    message = str(info.value)
    assert f"/example/demo/{C_RAW}/b.txt" in message
    assert sha(b"changed upstream\n") in message and sha(RAW_FILES["b.txt"]) in message
    assert files_under(dest) == []  # a.json verified fine, but the source is installed whole or not at all
    assert not list((tmp_path / "cache").rglob("b.txt*"))  # nor kept in the cache


def test_checksum_mismatch_of_an_archive_names_the_folder(
    tmp_path: Path, manifest: Manifest, mirror_dir: Path, server: str
) -> None:
    github_archive(
        mirror_dir / f"github.com/example/corpus/archive/{C_TREE}.tar.gz",
        "corpus",
        C_TREE,
        "data/Set",
        {**TREE, "RP2/Reference_XML/RP2.xml": b"<PAPER>edited</PAPER>\n"},
    )
    dest = tmp_path / "data"
    with pytest.raises(ChecksumError) as info:
        fetch(dest, manifest, server, tmp_path / "cache", sources=["tree"])
    message = str(info.value)
    expected = manifest.sources["tree"][0].digests["RP2"]
    assert "corpus/Set/RP2: tree digest" in message and f"expected {expected}" in message
    assert "RP1" not in message.split("Nothing was installed")[0]
    assert "delete it and run again" in message
    assert files_under(dest) == [] and not dest.exists()


def test_missing_file_in_archive_is_reported(tmp_path: Path, manifest: Manifest, mirror_dir: Path, server: str) -> None:
    incomplete = {k: v for k, v in TREE.items() if k != "RP1/Citance_XML/C1.xml"}
    github_archive(
        mirror_dir / f"github.com/example/corpus/archive/{C_TREE}.tar.gz", "corpus", C_TREE, "data/Set", incomplete
    )
    with pytest.raises(ChecksumError, match=r"1 file\(s\) missing: RP1/Citance_XML/C1.xml"):
        fetch(tmp_path / "data", manifest, server, tmp_path / "cache", sources=["tree"])


def test_damaged_archive_is_a_clear_error(tmp_path: Path, manifest: Manifest, mirror_dir: Path, server: str) -> None:
    archive = mirror_dir / f"github.com/example/corpus/archive/{C_NET}.tar.gz"
    archive.write_bytes(archive.read_bytes()[:200])
    with pytest.raises(FetchError, match="damaged or truncated") as info:
        fetch(tmp_path / "data", manifest, server, tmp_path / "cache", sources=["net"])
    assert f"{C_NET}.tar.gz" in str(info.value)
    assert not (tmp_path / "data").exists()


def test_unreachable_host_fails_fast_with_a_clear_message(tmp_path: Path, manifest: Manifest) -> None:
    with socket.socket() as probe:  # a port on 127.0.0.1 with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dest = tmp_path / "data"
    started = time.perf_counter()
    with pytest.raises(SourceUnreachableError) as info:
        fetch(dest, manifest, f"http://127.0.0.1:{port}", tmp_path / "cache", timeout=2.0)
    elapsed = time.perf_counter() - started
    message = str(info.value)
    assert elapsed < 5
    assert f"cannot reach http://127.0.0.1:{port}/raw.githubusercontent.com/example/demo/{C_RAW}/a.json" in message
    assert "connection refused" in message
    assert "no internet access" in message and "CITEGRAPH_DATA" in message and "../shared/data" in message
    assert isinstance(info.value, FetchError) and isinstance(info.value, CitegraphError)
    assert not dest.exists()


def test_http_error_is_not_mistaken_for_no_internet(
    tmp_path: Path, manifest: Manifest, mirror_dir: Path, server: str
) -> None:
    (mirror_dir / f"raw.githubusercontent.com/example/demo/{C_RAW}/a.json").unlink()
    with pytest.raises(FetchError, match="HTTP 404") as info:
        fetch(tmp_path / "data", manifest, server, tmp_path / "cache", sources=["files"])
    assert not isinstance(info.value, SourceUnreachableError)


def test_present_but_different_is_refused_unless_forced(tmp_path: Path, manifest: Manifest, server: str) -> None:
    dest = write_tree(tmp_path / "data", {"corpus/Set/RP1/Reference_XML/RP1.xml": b"mine\n"})
    with pytest.raises(FetchError, match=r"exists but does not match.*--force"):
        fetch(dest, manifest, server, tmp_path / "cache", sources=["tree"])
    assert (dest / "corpus/Set/RP1/Reference_XML/RP1.xml").read_bytes() == b"mine\n"

    report = fetch(dest, manifest, server, tmp_path / "cache", sources=["tree"], force=True)
    assert report.fetched == ["corpus/Set"]
    assert files_under(dest / "corpus/Set") == sorted(TREE)
    assert [p.name for p in dest.iterdir()] == ["corpus"]


# --- the ScisummNet derivation ---------------------------------------------------------------------
def test_acl_year() -> None:
    assert (
        acl_year("P98-1081") == 1998
        and acl_year("P14-2118") == 2014
        and acl_year("J61-1001") == 1961
        and acl_year("J60-1001") == 2060
    )
    assert acl_year("2020.acl-main.1") is None and acl_year("") is None


def test_filters_keep_citing_papers_up_to_the_year() -> None:
    up = NET_UPSTREAM
    assert (
        filter_citing_sentences(up["N00-1001/citing_sentences.json"], 2011)
        == NET_EXPECTED["N00-1001/citing_sentences.json"]
    )
    assert (
        filter_annotations(up["N00-1001/annotation/N00-1001.ann.txt"], 2011)
        == NET_EXPECTED["N00-1001/annotation/N00-1001.ann.txt"]
    )
    assert filter_annotations(up["N00-1002/annotation/N00-1002.ann.txt"], 2011) == b"\n"
    assert filter_citing_sentences(b"[]", 2011) == b"[]"


# --- the real manifest -----------------------------------------------------------------------------
def test_manifest_covers_the_public_sources_with_pinned_commits() -> None:
    manifest = load_manifest()
    # The user's own corpus and the importers of a user's own exports have nothing to download.
    assert set(manifest.sources) == {name for name, source in SOURCES.items() if source.bundled} - {"jsonl"}
    for artifacts in manifest.sources.values():
        for a in artifacts:
            if a.how == "manual":
                assert a.url is None and a.reason
                continue
            assert a.commit and len(a.commit) == 40 and a.commit in a.url
            if a.how == "raw":
                assert a.url == f"https://raw.githubusercontent.com/{a.repo}/{a.commit}/{a.upstream_path}"
            else:
                assert a.url == f"https://github.com/{a.repo}/archive/{a.commit}.tar.gz"
    # each loader's default path is what the manifest installs
    for name, artifacts in manifest.sources.items():
        paths = {a.path for a in artifacts}
        assert SOURCES[name].path in paths or all(p.startswith(SOURCES[name].path + "/") for p in paths)


@pytest.mark.shared_data
def test_manifest_checksums_match_the_shared_data(data_dir: Path) -> None:
    manifest = load_manifest()
    problems = [p for artifacts in manifest.sources.values() for a in artifacts for p in verify(a, data_dir / a.path)]
    assert problems == []


@pytest.mark.shared_data
def test_scisummnet_filters_are_a_fixed_point_on_the_shared_copy(data_dir: Path) -> None:
    """Applied to the shared files (already filtered), the derivation gives them back byte for byte."""
    root = data_dir / "scisumm/ScisummNet-2019"
    for rp in sorted(p.name for p in root.iterdir())[::20]:
        citing = (root / rp / "citing_sentences.json").read_bytes()
        notes = (root / rp / "annotation" / f"{rp}.ann.txt").read_bytes()
        assert filter_citing_sentences(citing, 2011) == citing, rp
        assert filter_annotations(notes, 2011) == notes, rp


@pytest.mark.shared_data
def test_real_manifest_end_to_end_for_the_raw_sources(tmp_path: Path, data_dir: Path) -> None:
    """The pinned raw URLs of cora, unarxive and taxonomy, served from the shared copy by a local mirror."""
    manifest = load_manifest()
    mirror = tmp_path / "mirror"
    for name in ("cora", "unarxive", "taxonomy"):
        for a in manifest.sources[name]:
            if a.how == "raw":
                target = cache_path(mirror, a.url)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(data_dir / a.path, target)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=mirror))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        report = fetch_data(
            tmp_path / "data",
            ["cora", "unarxive", "taxonomy"],
            mirror=f"http://127.0.0.1:{httpd.server_address[1]}",
            cache_dir=tmp_path / "cache",
            opener=OPEN,
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
    assert len(report.fetched) == 7
    assert [path for path, _ in report.manual] == ["taxonomy/arxiv_taxonomy.json", "taxonomy/acm_ccs2012.xml"]
    for path in report.fetched:
        assert (tmp_path / "data" / path).read_bytes() == (data_dir / path).read_bytes()
