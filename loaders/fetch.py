"""``citegraph fetch-data``: download the public corpora into the layout the loaders expect.

The sources, their pinned commits and their checksums live in ``loaders/fetch_manifest.json``
(one entry per file or folder under the data folder, ``$CITEGRAPH_DATA``). Each entry says how
it is obtained:

* ``raw``: one file, verbatim, from ``raw.githubusercontent.com/<repo>/<commit>/<path>``; its
  sha256 is checked after download;
* ``tree``: files taken verbatim from the repository archive at the pinned commit
  (``github.com/<repo>/archive/<commit>.tar.gz``); GitHub does not promise stable archive bytes,
  so the archive itself is not checksummed: the files it yields are, folder by folder (tree digest);
* ``scisummnet``: like ``tree``, but the citing sentences (``citing_sentences.json``) and the
  automatic annotations (``annotation/<RP>.ann.txt``) keep only citing papers up to
  ``max_citing_year`` (the year of an ACL id such as ``P14-2118``), written the way the shared
  copy has them; the result is checked like ``tree``;
* ``manual``: derived files whose derivation cannot be pinned (the Anthology snapshot, the arXiv
  taxonomy dump) or files with no pinnable upstream (ACM CCS 2012): never downloaded; checked
  when present, otherwise reported with what to do.

Every source is installed atomically: its files are built and verified in a staging folder
inside ``dest`` and only then renamed into place, so a failed download leaves nothing behind.
A file or folder already present and verified is skipped (no network at all when everything is
there). Downloads are kept in a cache (``$CITEGRAPH_CACHE/downloads/<host>/<path>``, the same
layout a ``mirror`` serves), so a second run or another data folder reuses them.

Without internet the first request fails within seconds (``timeout`` bounds connecting and each
read) with :class:`SourceUnreachableError`, which names the URL and says what to do instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import tarfile
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any
from urllib.parse import urlsplit

from graph.errors import CitegraphError, ConfigError
from graph.files import default_cache_root

log = logging.getLogger("citegraph.fetch")

MANIFEST_PATH = Path(__file__).with_name("fetch_manifest.json")
HOWS = ("raw", "tree", "scisummnet", "manual")
CHUNK = 1 << 20
ACL_ID = re.compile(r"^[A-Z](\d{2})-\d{4}$")
CITING_ARTICLE = re.compile(r"Citing Article:\s*(\S+?)(?:\.txt)?\s*\|")
STAGING_PREFIX = ".citegraph-fetch-"

Opener = Callable[..., Any]  # urllib.request.urlopen-like: opener(url, timeout=...) -> response (context manager)

NO_INTERNET_HINT = (
    "This machine seems to have no internet access. Point CITEGRAPH_DATA at an existing copy of the data "
    "instead (e.g. `export CITEGRAPH_DATA=../shared/data`), or run `citegraph fetch-data` on a machine with "
    "internet and copy the folder here (or serve its download cache and pass --mirror URL)."
)
MANUAL_HINT = "copy it from a machine that has the data (e.g. ../shared/data) or set CITEGRAPH_DATA to such a copy"


class FetchError(CitegraphError):
    """Downloading or installing a source failed; ``dest`` holds nothing of that source."""


class SourceUnreachableError(FetchError):
    """A download URL could not be reached (no network, DNS failure, refused, timed out)."""


class ChecksumError(FetchError):
    """A downloaded or derived file does not match its pinned sha256 (or tree digest)."""


# --- the manifest ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Artifact:
    """One file or folder under the data folder and how to obtain it (an entry of the manifest)."""

    source: str
    path: str  # relative to the data folder, POSIX separators: a file (raw, manual) or a folder (tree, scisummnet)
    how: str  # one of HOWS
    repo: str | None = None  # owner/name on GitHub
    commit: str | None = None  # pinned commit; None where it could not be pinned (manual entries)
    url: str | None = None  # raw file or repository archive at ``commit``
    upstream_path: str | None = None  # the file (raw) or folder (tree, scisummnet) in the repository
    sha256: str | None = None  # raw and manual files
    digests: Mapping[str, str] = field(default_factory=dict)  # tree / scisummnet: top-level folder -> tree digest
    files: tuple[str, ...] = ()  # tree: the files to take, relative to ``path``
    max_citing_year: int | None = None  # scisummnet: keep citing papers up to this year
    reason: str = ""  # manual: why it cannot be downloaded
    checked: str = ""  # how the pinned upstream was compared with the shared copy

    @classmethod
    def from_dict(cls, source: str, entry: Mapping[str, Any]) -> Artifact:
        how = entry.get("how")
        if how not in HOWS:
            raise ConfigError(f"fetch manifest: {source}: unknown 'how' {how!r}; expected one of {', '.join(HOWS)}")
        artifact = cls(
            source=source,
            path=str(entry["path"]),
            how=how,
            repo=entry.get("repo"),
            commit=entry.get("commit"),
            url=entry.get("url"),
            upstream_path=entry.get("upstream_path"),
            sha256=entry.get("sha256"),
            digests=dict(entry.get("digests") or {}),
            files=tuple(entry.get("files") or ()),
            max_citing_year=entry.get("max_citing_year"),
            reason=entry.get("reason", ""),
            checked=entry.get("checked", ""),
        )
        artifact.check()
        return artifact

    def check(self) -> None:
        """:class:`ConfigError` when the entry lacks what its ``how`` needs."""
        where = f"fetch manifest: {self.source}: {self.path}"
        if PurePosixPath(self.path).is_absolute() or ".." in PurePosixPath(self.path).parts:
            raise ConfigError(f"{where}: the path must be relative to the data folder")
        if self.how in ("raw", "manual") and not self.sha256:
            raise ConfigError(f"{where}: a {self.how} entry needs a sha256")
        if self.how != "manual" and not (self.url and self.commit and self.repo):
            raise ConfigError(f"{where}: a {self.how} entry needs repo, commit and url")
        if self.how in ("tree", "scisummnet") and not (self.digests and self.upstream_path):
            raise ConfigError(f"{where}: a {self.how} entry needs upstream_path and digests")
        if self.how == "scisummnet" and self.max_citing_year is None:
            raise ConfigError(f"{where}: a scisummnet entry needs max_citing_year")


@dataclass(frozen=True)
class Manifest:
    sources: Mapping[str, tuple[Artifact, ...]]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Manifest:
        try:
            return cls(
                {
                    name: tuple(Artifact.from_dict(name, entry) for entry in entries)
                    for name, entries in data["sources"].items()
                }
            )
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"fetch manifest is malformed ({exc!r}); restore loaders/fetch_manifest.json") from exc

    @classmethod
    def load(cls, path: Path = MANIFEST_PATH) -> Manifest:
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except FileNotFoundError as exc:
            raise ConfigError(f"fetch manifest {path} is missing; reinstall citegraph") from exc
        except json.JSONDecodeError as exc:
            raise ConfigError(f"fetch manifest {path} is not JSON ({exc}); restore it") from exc


def load_manifest(path: Path = MANIFEST_PATH) -> Manifest:
    return Manifest.load(path)


# --- the report -----------------------------------------------------------------------------------
@dataclass
class FetchReport:
    """What :func:`fetch_data` did, per file or folder (paths relative to ``dest``)."""

    dest: Path
    fetched: list[str] = field(default_factory=list)  # downloaded (or built), verified and installed now
    present: list[str] = field(default_factory=list)  # already there and verified: skipped
    manual: list[tuple[str, str]] = field(default_factory=list)  # (path, what to do): not downloadable, absent or off

    @property
    def complete(self) -> bool:
        """Every requested file is now in place and verified."""
        return not self.manual

    def summary(self) -> str:
        lines = [
            f"fetch-data into {self.dest}: {len(self.fetched)} fetched, {len(self.present)} already present, "
            f"{len(self.manual)} to copy by hand"
        ]
        lines += [f"  fetched  {path}" for path in self.fetched]
        lines += [f"  present  {path}" for path in self.present]
        lines += [f"  MISSING  {path}: {todo}" for path, todo in self.manual]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dest": str(self.dest),
            "fetched": list(self.fetched),
            "present": list(self.present),
            "manual": [{"path": path, "todo": todo} for path, todo in self.manual],
            "complete": self.complete,
        }


# --- hashing and verification ---------------------------------------------------------------------
def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_files(root: Path, folder: str = "") -> list[str]:
    """Paths (POSIX, relative to ``root``) of the files under ``root/folder``, sorted."""
    base = Path(root) / folder if folder else Path(root)
    return sorted(p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file())


def tree_digest(root: Path, folder: str) -> str:
    """sha256 of ``'<sha256 of file>  <path relative to root>\\n'`` over the files of ``root/folder``, by path."""
    lines = "".join(f"{sha256_file(Path(root) / rel)}  {rel}\n" for rel in tree_files(root, folder))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def verify(artifact: Artifact, target: Path) -> list[str]:
    """Problems of ``target`` (the artefact's file or folder) against the manifest; empty when it verifies."""
    target = Path(target)
    if artifact.how in ("raw", "manual"):
        if not target.is_file():
            return [f"{artifact.path}: missing"]
        actual = sha256_file(target)
        if actual != artifact.sha256:
            return [f"{artifact.path}: sha256 {actual}, expected {artifact.sha256}"]
        return []
    if not target.is_dir():
        return [f"{artifact.path}: missing (expected a folder)"]
    problems: list[str] = []
    folders = {p.name for p in target.iterdir() if p.is_dir()}
    stray = sorted(p.name for p in target.iterdir() if not p.is_dir())
    if missing := sorted(set(artifact.digests) - folders):
        problems.append(f"{artifact.path}: {len(missing)} folder(s) missing: {_few(missing)}")
    if extra := sorted(folders - set(artifact.digests)):
        problems.append(f"{artifact.path}: {len(extra)} unexpected folder(s): {_few(extra)}")
    if stray:
        problems.append(f"{artifact.path}: unexpected file(s) at the top: {_few(stray)}")
    if artifact.files:
        have = set(tree_files(target))
        if absent := sorted(set(artifact.files) - have):
            problems.append(f"{artifact.path}: {len(absent)} file(s) missing: {_few(absent)}")
    for folder in sorted(folders & set(artifact.digests)):
        actual = tree_digest(target, folder)
        if actual != artifact.digests[folder]:
            n = len(tree_files(target, folder))
            problems.append(
                f"{artifact.path}/{folder}: tree digest {actual}, expected {artifact.digests[folder]} ({n} files)"
            )
    return problems


def _few(names: Sequence[str], n: int = 5) -> str:
    return ", ".join(names[:n]) + (f" (+{len(names) - n} more)" if len(names) > n else "")


# --- ScisummNet: citing papers up to a year -------------------------------------------------------
def acl_year(paper_id: str) -> int | None:
    """Year of an old-style ACL id (``P98-1081`` -> 1998, ``P14-2118`` -> 2014); None for any other id."""
    m = ACL_ID.match(paper_id.strip())
    if not m:
        return None
    yy = int(m.group(1))
    return 1900 + yy if yy > 60 else 2000 + yy


def _kept(paper_id: str | None, max_year: int) -> bool:
    year = acl_year(paper_id or "")
    return year is not None and year <= max_year


def filter_citing_sentences(raw: bytes, max_year: int) -> bytes:
    """``citing_sentences.json`` keeping citing papers up to ``max_year``, as the shared copy writes it.

    Upstream writes Python 2 ``json.dump(indent=2)``; the shared copy holds ``json.dumps(indent=1,
    ensure_ascii=False)`` without a final newline.
    """
    records = json.loads(raw.decode("utf-8"))
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError("expected a JSON list of objects")
    kept = [r for r in records if _kept(str(r.get("citing_paper_id", "")), max_year)]
    return json.dumps(kept, indent=1, ensure_ascii=False).encode("utf-8")


def filter_annotations(raw: bytes, max_year: int) -> bytes:
    """``<RP>.ann.txt`` keeping the records of citing papers up to ``max_year``.

    Upstream separates the one-line records by two blank lines; the shared copy by one, with a final
    newline (an RP left without records is a file holding one newline).
    """
    text = raw.decode("utf-8")
    records = [r for r in re.split(r"\n\s*\n", text.strip()) if r.strip()]
    kept = []
    for record in records:
        m = CITING_ARTICLE.search(record)
        if m and _kept(m.group(1), max_year):
            kept.append(record)
    return ("\n\n".join(kept) + "\n").encode("utf-8")


# --- downloading ----------------------------------------------------------------------------------
def default_cache_dir() -> Path:
    """``$CITEGRAPH_CACHE/downloads`` (default ``~/.cache/citegraph/downloads``)."""
    return default_cache_root() / "downloads"


def mirrored(url: str, mirror: str | None) -> str:
    """``url`` on ``mirror`` (``<mirror>/<host>/<path>``), or ``url`` itself without a mirror."""
    if not mirror:
        return url
    parts = urlsplit(url)
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}"


def cache_path(cache_dir: Path, url: str) -> Path:
    """Where the download of ``url`` is kept: ``<cache>/<host>/<path>`` (a layout a mirror can serve)."""
    parts = urlsplit(url)
    rel = PurePosixPath(parts.path.lstrip("/"))
    if ".." in rel.parts or not rel.parts:
        raise ConfigError(f"fetch manifest: cannot cache {url!r}")
    return Path(cache_dir, parts.netloc, *rel.parts)


def _unreachable(url: str, exc: BaseException, timeout: float) -> SourceUnreachableError:
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, TimeoutError):
        what = f"no answer within {timeout:g} s"
    elif isinstance(reason, socket.gaierror):
        what = f"the host name could not be resolved ({reason.strerror or reason})"
    elif isinstance(reason, ConnectionRefusedError):
        what = "connection refused"
    else:
        what = str(reason) or type(reason).__name__
    return SourceUnreachableError(f"cannot reach {url}: {what}. {NO_INTERNET_HINT}")


def download(
    url: str,
    target: Path,
    *,
    opener: Opener = urllib.request.urlopen,
    timeout: float = 10.0,
    sha256: str | None = None,
) -> Path:
    """``url`` into ``target`` (via ``target.part``, renamed when complete); reused when already there.

    With ``sha256`` the download is checked (and a cached file that does not match is fetched again).
    """
    target = Path(target)
    if target.is_file() and (sha256 is None or sha256_file(target) == sha256):
        log.info("cached: %s", target)
        return target
    part = target.with_name(target.name + ".part")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        out = part.open("wb")
    except OSError as exc:
        raise FetchError(f"cannot write downloads to {target.parent} ({exc}); pass a writable --cache") from exc
    log.info("downloading %s", url)
    try:
        with out:
            written, expected = _fetch_into(url, out, opener=opener, timeout=timeout)
        if expected is not None and written != expected:
            raise FetchError(f"{url}: the download was cut short ({written} of {expected} bytes); run again")
        if sha256 is not None and (actual := sha256_file(part)) != sha256:
            raise ChecksumError(
                f"{url}: the downloaded file has sha256 {actual}, expected {sha256}; the upstream file changed or "
                "the download was corrupted (nothing was installed)"
            )
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)
    return target


def _fetch_into(url: str, out: IO[bytes], *, opener: Opener, timeout: float) -> tuple[int, int | None]:
    """Copy the response of ``url`` into ``out``: (bytes written, Content-Length or None)."""
    try:
        response = opener(url, timeout=timeout)
    except urllib.error.HTTPError as exc:
        raise FetchError(
            f"{url}: the server answered HTTP {exc.code} {exc.reason}; the pinned file may be gone upstream "
            "(see loaders/fetch_manifest.json), or the mirror lacks it"
        ) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise _unreachable(url, exc, timeout) from exc
    written = 0
    with response:
        expected = _content_length(response)
        while True:
            try:
                block = response.read(CHUNK)
            except (urllib.error.URLError, OSError) as exc:
                raise FetchError(f"{url}: the download failed after {written} bytes ({exc}); run again") from exc
            if not block:
                return written, expected
            try:
                out.write(block)
            except OSError as exc:
                raise FetchError(
                    f"cannot write the download of {url} ({exc}); free some space or pass --cache"
                ) from exc
            written += len(block)


def _content_length(response: Any) -> int | None:
    headers = getattr(response, "headers", None)
    value = headers.get("Content-Length") if headers is not None else None
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# --- building one artefact in the staging folder --------------------------------------------------
def _archive_members(archive: Path, prefix: str) -> Iterable[tuple[str, tarfile.TarFile, tarfile.TarInfo]]:
    """``(path under prefix, tar, member)`` for the regular files of a GitHub archive below ``prefix``.

    The archive's top folder (``<repo>-<commit>/``) is dropped; the tar is read front to back, once.
    """
    prefix = prefix.strip("/") + "/"
    try:
        with tarfile.open(archive, mode="r:*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                name = member.name.split("/", 1)[1] if "/" in member.name else member.name
                if name.startswith(prefix):
                    yield name[len(prefix) :], tar, member
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise FetchError(f"{archive}: the archive is damaged or truncated ({exc}); delete it and run again") from exc


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    try:
        handle = tar.extractfile(member)
        if handle is None:
            raise FetchError(f"cannot read {member.name} from the archive")
        with handle:
            return handle.read()
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise FetchError(f"cannot read {member.name}: the archive is damaged or truncated ({exc})") from exc


def _derive(name: str, derive: Callable[[bytes, int], bytes], data: bytes, max_year: int) -> bytes:
    try:
        return derive(data, max_year)
    except ValueError as exc:  # not UTF-8, not JSON
        raise FetchError(f"{name}: the upstream file is not in the expected format ({exc})") from exc


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _safe_rel(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return bool(parts) and ".." not in parts and not PurePosixPath(rel).is_absolute()


def _build(
    artifact: Artifact, out: Path, *, cache_dir: Path, opener: Opener, timeout: float, mirror: str | None
) -> None:
    assert artifact.url is not None  # checked by Artifact.check
    url = mirrored(artifact.url, mirror)
    cached = cache_path(cache_dir, artifact.url)
    if artifact.how == "raw":
        download(url, cached, opener=opener, timeout=timeout, sha256=artifact.sha256)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cached, out)
        return
    download(url, cached, opener=opener, timeout=timeout)
    assert artifact.upstream_path is not None
    out.mkdir(parents=True, exist_ok=True)
    if artifact.how == "tree":
        wanted = set(artifact.files) if artifact.files else None
        for rel, tar, member in _archive_members(cached, artifact.upstream_path):
            top = rel.split("/", 1)[0]
            if _safe_rel(rel) and top in artifact.digests and (wanted is None or rel in wanted):
                _write(out / rel, _read_member(tar, member))
        return
    assert artifact.max_citing_year is not None
    for rel, tar, member in _archive_members(cached, artifact.upstream_path):
        rp, _, inner = rel.partition("/")
        if rp not in artifact.digests or not _safe_rel(rel):
            continue
        if inner in (f"Reference_XML/{rp}.xml", f"summary/{rp}.abstract.txt", f"summary/{rp}.scisummnet_human.txt"):
            _write(out / rel, _read_member(tar, member))
        elif inner == f"annotation/{rp}.ann.txt":
            data = _derive(member.name, filter_annotations, _read_member(tar, member), artifact.max_citing_year)
            _write(out / rel, data)
        elif inner == "citing_sentences.json":
            data = _derive(member.name, filter_citing_sentences, _read_member(tar, member), artifact.max_citing_year)
            _write(out / rel, data)


def _install(built: Path, target: Path, trash: Path) -> None:
    """Rename ``built`` onto ``target``; an existing ``target`` (``force``) is moved into ``trash`` first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() or target.is_symlink():
        trash.mkdir(parents=True, exist_ok=True)
        os.replace(target, trash / f"{len(list(trash.iterdir()))}-{target.name}")
    os.replace(built, target)


# --- the entry point ------------------------------------------------------------------------------
def fetch_data(
    dest: Path,
    sources: list[str] | None = None,
    *,
    timeout: float = 10.0,
    opener: Opener = urllib.request.urlopen,
    cache_dir: Path | None = None,
    mirror: str | None = None,
    force: bool = False,
    manifest: Manifest | None = None,
) -> FetchReport:
    """Download, verify and install the public sources into ``dest`` (the data folder).

    Args:
        dest: the data folder (what ``CITEGRAPH_DATA`` points at); created when needed.
        sources: names from the manifest (``taxonomy``, ``scisumm2018``, ``scisummnet``, ``anthology``,
            ``unarxive``, ``cora``); all of them when None.
        timeout: seconds for connecting and for each read; without internet the first request fails
            within it (DNS failures fail at once).
        opener: ``urllib.request.urlopen``-like callable (tests inject one).
        cache_dir: where downloads are kept (default ``$CITEGRAPH_CACHE/downloads``).
        mirror: base URL serving ``<host>/<path>`` of the pinned URLs (e.g. another machine's cache dir).
        force: replace a file or folder that exists but does not verify (default: refuse).
        manifest: the pinned sources (default: ``loaders/fetch_manifest.json``).

    Returns:
        the :class:`FetchReport`; entries that cannot be downloaded (``manual``) and are absent or
        differ are listed in ``report.manual`` with what to do, never raised.

    Raises:
        SourceUnreachableError: a URL could not be reached (no internet): nothing of that source was written.
        ChecksumError: a download or a built file does not match the manifest: nothing of that source was written.
        FetchError: any other failure (HTTP error, damaged archive, unwritable ``dest``, a present file that
            differs without ``force``).
        ConfigError: an unknown source name.
    """
    manifest = manifest or Manifest.load()
    names = list(manifest.sources) if sources is None else list(dict.fromkeys(sources))
    if unknown := [n for n in names if n not in manifest.sources]:
        raise ConfigError(
            f"unknown source(s) {', '.join(map(repr, unknown))} for fetch-data; known: {', '.join(manifest.sources)}"
        )
    dest = Path(dest)
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    report = FetchReport(dest)
    for name in names:
        todo: list[Artifact] = []
        for artifact in manifest.sources[name]:
            target = dest / artifact.path
            present = target.exists()
            problems = verify(artifact, target) if present else [f"{artifact.path}: missing"]
            if not problems:
                report.present.append(artifact.path)
            elif artifact.how == "manual":
                why = "differs from the pinned copy" if present else "not downloadable"
                report.manual.append((artifact.path, f"{why} ({artifact.reason}); {MANUAL_HINT}"))
            elif present and not force:
                raise FetchError(
                    f"{target} exists but does not match the pinned upstream ({'; '.join(problems[:3])}); "
                    "move it away, or pass --force to replace it"
                )
            else:
                todo.append(artifact)
        if todo:
            _fetch_source(name, todo, dest, cache_dir=cache_dir, opener=opener, timeout=timeout, mirror=mirror)
            report.fetched.extend(a.path for a in todo)
    return report


def _fetch_source(
    name: str,
    artifacts: Sequence[Artifact],
    dest: Path,
    *,
    cache_dir: Path,
    opener: Opener,
    timeout: float,
    mirror: str | None,
) -> None:
    """Build every artefact of one source in a staging folder inside ``dest``, verify, then rename into place.

    On failure the staging folder is removed (and ``dest`` too when this call created it and it is empty).
    """
    created = not dest.exists()
    try:
        dest.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{name}-", dir=dest))
    except OSError as exc:
        raise FetchError(f"cannot write to {dest} ({exc}); pass a writable --dest") from exc
    installed = False
    try:
        built = staging / "new"
        for artifact in artifacts:
            _build(artifact, built / artifact.path, cache_dir=cache_dir, opener=opener, timeout=timeout, mirror=mirror)
            if problems := verify(artifact, built / artifact.path):
                shown = "; ".join(problems[:5]) + (f"; +{len(problems) - 5} more" if len(problems) > 5 else "")
                hint = ""
                if artifact.how != "raw" and artifact.url:
                    hint = f" If the archive {cache_path(cache_dir, artifact.url)} is damaged, delete it and run again."
                raise ChecksumError(
                    f"{name}: the downloaded files do not match the manifest (pinned {artifact.repo}@"
                    f"{artifact.commit}): {shown}. Nothing was installed.{hint}"
                )
        for artifact in artifacts:
            _install(built / artifact.path, dest / artifact.path, staging / "old")
            installed = True
            log.info("installed %s", dest / artifact.path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not installed:
            with contextlib.suppress(OSError):
                dest.rmdir()


__all__ = [
    "MANIFEST_PATH",
    "Artifact",
    "ChecksumError",
    "FetchError",
    "FetchReport",
    "Manifest",
    "SourceUnreachableError",
    "acl_year",
    "default_cache_dir",
    "download",
    "fetch_data",
    "filter_annotations",
    "filter_citing_sentences",
    "load_manifest",
    "mirrored",
    "sha256_file",
    "tree_digest",
    "verify",
]
