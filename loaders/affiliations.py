"""Authors' addresses -> institutions and countries, for co-authorship maps of institutions and countries.

A source gives each paper's affiliations in its own way:

* Web of Science ``C1``: one address per line (tab-delimited: ``"; "`` between addresses), ``[Aria,
  Massimo] Univ Napoli Federico II, Dept Econ & Stat, Via Cintia, I-80126 Naples, Italy.`` (the bracket of
  authors is absent in older records): the institution is the first comma-separated part after the
  bracket, the country the last part; a United States address ends in its state and ZIP code (``ROCHESTER,
  NY 14627`` or ``NY 14627 USA``);
* Scopus ``Affiliations``: ``"; "`` between addresses, ``Department of X, University of Y, City, Country``:
  the institution is the first part that names one (:data:`INSTITUTION_WORDS`: university, institute,
  hospital, ...), else the first part; the country the last part;
* OpenAlex ``authorships[].institutions[]`` (``id``, ``display_name``, ``country_code``) and
  ``authorships[].countries`` (codes): read by :mod:`loaders.openalex`.

Country names become ISO 3166-1 alpha-2 codes by :data:`COUNTRY_CODES` (the ISO 3166-1 English short names
of the countries most frequent in bibliographic databases, plus the forms Web of Science writes in addresses:
``Peoples R China``, ``USA``, ``England``/``Scotland``/``Wales``/``North Ireland``, ``U Arab Emirates``,
``Rep Congo``...; the retired ISO 3166-3 codes of ``Yugoslavia``, ``Czechoslovakia`` and ``Ger Dem Rep`` for
old records). A last part the table does not know is no country (Scopus ends some addresses with a city): the
institution is kept without a country and the name is logged.

:func:`affiliation_tables` turns ``{paper key: [Affiliation, ...]}`` into the ``Institution`` and ``Country``
node tables and the ``AFFILIATION`` and ``IN_COUNTRY`` relationship tables (once per paper and node): an
institution is keyed by the source's id where it has one (``openalex:I...``), else by its name folded to
letters and digits with its country (``inst:univnapolifedericoii|IT``).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN

log = logging.getLogger(__name__)

INSTITUTION_PREFIX = "inst:"
OPENALEX_INSTITUTION = "openalex:"  # OpenAlex institution ids: "openalex:I1294671590"
# Country names (upper case, letters and spaces only) -> ISO 3166-1 alpha-2. Sources: ISO 3166-1 English
# short names; Web of Science's address conventions (Clarivate: "Peoples R China", "England", "U Arab Emirates").
COUNTRY_CODES: Mapping[str, str] = {
    "ALGERIA": "DZ", "ARGENTINA": "AR", "AUSTRALIA": "AU", "AUSTRIA": "AT", "BANGLADESH": "BD",
    "BELARUS": "BY", "BELGIUM": "BE", "BRAZIL": "BR", "BULGARIA": "BG", "CAMEROON": "CM", "CANADA": "CA",
    "CHILE": "CL", "CHINA": "CN", "PEOPLES R CHINA": "CN", "PEOPLES REPUBLIC OF CHINA": "CN", "COLOMBIA": "CO",
    "CROATIA": "HR", "CUBA": "CU", "CYPRUS": "CY", "CZECH REPUBLIC": "CZ", "CZECHIA": "CZ", "DENMARK": "DK",
    "ECUADOR": "EC", "EGYPT": "EG", "ESTONIA": "EE", "ETHIOPIA": "ET", "FINLAND": "FI", "FRANCE": "FR",
    "GERMANY": "DE", "FED REP GER": "DE", "WEST GERMANY": "DE", "GHANA": "GH", "GREECE": "GR",
    "HONG KONG": "HK", "HUNGARY": "HU", "ICELAND": "IS", "INDIA": "IN", "INDONESIA": "ID", "IRAN": "IR",
    "IRAQ": "IQ", "IRELAND": "IE", "ISRAEL": "IL", "ITALY": "IT", "JAPAN": "JP", "JORDAN": "JO",
    "KAZAKHSTAN": "KZ", "KENYA": "KE", "SOUTH KOREA": "KR", "KOREA": "KR", "REPUBLIC OF KOREA": "KR",
    "KUWAIT": "KW", "LATVIA": "LV", "LEBANON": "LB", "LITHUANIA": "LT", "LUXEMBOURG": "LU", "MALAYSIA": "MY",
    "MEXICO": "MX", "MOROCCO": "MA", "NETHERLANDS": "NL", "NEW ZEALAND": "NZ", "NIGERIA": "NG", "NORWAY": "NO",
    "OMAN": "OM", "PAKISTAN": "PK", "PERU": "PE", "PHILIPPINES": "PH", "POLAND": "PL", "PORTUGAL": "PT",
    "QATAR": "QA", "ROMANIA": "RO", "RUSSIA": "RU", "RUSSIAN FEDERATION": "RU", "USSR": "SU",
    "SAUDI ARABIA": "SA", "SERBIA": "RS", "SINGAPORE": "SG", "SLOVAKIA": "SK", "SLOVENIA": "SI",
    "SOUTH AFRICA": "ZA", "SPAIN": "ES", "SRI LANKA": "LK", "SWEDEN": "SE", "SWITZERLAND": "CH", "TAIWAN": "TW",
    "TANZANIA": "TZ", "THAILAND": "TH", "TUNISIA": "TN", "TURKEY": "TR", "TURKIYE": "TR", "UGANDA": "UG",
    "UKRAINE": "UA", "U ARAB EMIRATES": "AE", "UNITED ARAB EMIRATES": "AE", "UNITED KINGDOM": "GB",
    "UK": "GB", "ENGLAND": "GB", "SCOTLAND": "GB", "WALES": "GB", "NORTH IRELAND": "GB", "NORTHERN IRELAND": "GB",
    "USA": "US", "UNITED STATES": "US", "UNITED STATES OF AMERICA": "US", "URUGUAY": "UY", "VENEZUELA": "VE",
    "VIETNAM": "VN", "VIET NAM": "VN", "ZIMBABWE": "ZW", "REP CONGO": "CG", "DEM REP CONGO": "CD",
    "PALESTINE": "PS", "COSTA RICA": "CR", "EL SALVADOR": "SV", "PANAMA": "PA", "GUATEMALA": "GT", "NEPAL": "NP", "SUDAN": "SD",
    "SENEGAL": "SN", "MALTA": "MT", "MONGOLIA": "MN", "GEORGIA": "GE", "ARMENIA": "AM", "AZERBAIJAN": "AZ",
    "UZBEKISTAN": "UZ", "BOLIVIA": "BO", "PARAGUAY": "PY", "LIBYA": "LY", "SYRIA": "SY", "YEMEN": "YE",
    "BAHRAIN": "BH", "MACAU": "MO", "BRUNEI": "BN", "CAMBODIA": "KH", "MYANMAR": "MM", "MOLDOVA": "MD", "YUGOSLAVIA": "YU", "CZECHOSLOVAKIA": "CS", "GER DEM REP": "DD", "BOSNIA & HERCEG": "BA", "BOSNIA AND HERZEGOVINA": "BA", "NORTH MACEDONIA": "MK",
}  # fmt: skip
# Words that mark the part of a Scopus address naming the institution (checked in this order of parts).
INSTITUTION_WORDS = (
    "univ", "inst", "college", "school", "hospital", "academy", "center", "centre", "laborator",
    "company", "corporation", "council", "agency", "ministry", "foundation", "cnrs", "politecnico",
)  # fmt: skip
_US_STATE_ZIP = re.compile(r"^[A-Z]{2}(?:\s+\d{5}(?:-\d{4})?)?(?:\s+USA)?$")
_BRACKET = re.compile(r"^\s*\[[^\]]*\]\s*")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Affiliation:
    """One institution (or, with ``institution`` None, a country alone) of a paper's authors."""

    institution: str | None  # the name as the source writes it
    country: str | None  # ISO 3166-1 alpha-2; None where the address names no known country
    institution_id: str | None = None  # the source's own id (OpenAlex), else one is made from name and country


def _fold(text: str) -> str:
    """Upper case, accents dropped, letters/digits/ampersand and single spaces only."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return " ".join(re.sub(r"[^A-Za-z0-9&]+", " ", plain).upper().split())


def country_code(name: str | None) -> str | None:
    """The ISO 3166-1 alpha-2 code of a country as an address writes it (``Peoples R China`` -> ``CN``,
    ``NY 14627 USA`` -> ``US``); None where :data:`COUNTRY_CODES` knows no such country (an address whose last
    part is a city, as Scopus writes some)."""
    if not name:
        return None
    folded = _fold(name)
    if not folded:
        return None
    if folded in COUNTRY_CODES:
        return COUNTRY_CODES[folded]
    if _US_STATE_ZIP.match(folded) or folded.endswith(" USA"):
        return "US"
    words = folded.split()
    for cut in range(1, len(words)):  # "I-80126 NAPLES ITALY" style tails: the longest known suffix
        tail = " ".join(words[cut:])
        if tail in COUNTRY_CODES:
            return COUNTRY_CODES[tail]
    log.info("%r is no country of loaders.affiliations.COUNTRY_CODES; the address counts without a country", name)
    return None


def wos_addresses(lines: Iterable[str]) -> list[Affiliation]:
    """The affiliations of a WoS record's ``C1`` values (one address each; see the module docstring)."""
    found = []
    for line in lines:
        address = _BRACKET.sub("", line).strip().rstrip(".").strip()
        parts = [p.strip() for p in address.split(",") if p.strip()]
        if not parts:
            continue
        found.append(Affiliation(parts[0], country_code(parts[-1]) if len(parts) > 1 else None))
    return found


def split_wos_addresses(value: str) -> list[str]:
    """A tab-delimited ``C1`` cell as its addresses: ``"; "`` separates them, except inside an authors' bracket."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(value):
        depth += ch == "["
        depth -= ch == "]"
        if ch == ";" and depth == 0:
            out.append(value[start:k])
            start = k + 1
    out.append(value[start:])
    return [a.strip() for a in out if a.strip()]


def scopus_affiliations(value: str | None) -> list[Affiliation]:
    """The affiliations of a Scopus ``Affiliations`` cell (see the module docstring)."""
    if not value:
        return []
    found = []
    for address in value.split(";"):
        parts = [p.strip() for p in address.split(",") if p.strip()]
        if not parts:
            continue
        lowered = [p.lower() for p in parts[:-1]] or [parts[0].lower()]
        pick = next((k for k, p in enumerate(lowered) if any(w in p for w in INSTITUTION_WORDS)), 0)
        found.append(Affiliation(parts[pick], country_code(parts[-1]) if len(parts) > 1 else None))
    return found


def openalex_affiliations(authorships: object) -> list[Affiliation]:
    """The institutions (``openalex:I…`` ids, ``display_name``, ``country_code``) of a work's ``authorships``, then
    the countries of ``authorships[].countries`` that no institution brought; malformed entries are skipped."""
    found: list[Affiliation] = []
    countries: set[str] = set()
    extra: list[str] = []
    for authorship in authorships if isinstance(authorships, list) else []:
        if not isinstance(authorship, dict):
            continue
        institutions = authorship.get("institutions")
        for institution in institutions if isinstance(institutions, list) else []:
            if not isinstance(institution, dict):
                continue
            raw_id = institution.get("id")
            short = raw_id.rstrip("/").rsplit("/", 1)[-1] if isinstance(raw_id, str) and raw_id.strip() else None
            code = institution.get("country_code")
            code = code.strip().upper() if isinstance(code, str) and code.strip() else None
            name = institution.get("display_name")
            name = name.strip() if isinstance(name, str) and name.strip() else None
            if short is None and name is None:
                continue
            found.append(Affiliation(name or short, code, f"{OPENALEX_INSTITUTION}{short}" if short else None))
            if code:
                countries.add(code)
        listed = authorship.get("countries")
        for code in listed if isinstance(listed, list) else []:
            if isinstance(code, str) and code.strip():
                extra.append(code.strip().upper())
    found.extend(Affiliation(None, code) for code in dict.fromkeys(extra) if code not in countries)
    return found


def institution_id(affiliation: Affiliation) -> str | None:
    """The key of an affiliation's Institution (module docstring); None for a country alone."""
    if affiliation.institution_id:
        return affiliation.institution_id
    if not affiliation.institution:
        return None
    name = _NOT_ALNUM.sub("", _fold(affiliation.institution).lower())
    return f"{INSTITUTION_PREFIX}{name}|{affiliation.country or ''}" if name else None


def affiliation_tables(
    papers: Mapping[str, tuple[list[Affiliation], str]],
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """``{paper key: (affiliations, origin)}`` -> Institution and Country nodes, AFFILIATION and IN_COUNTRY edges
    (each once per paper; the first name read for a key is its name). Empty tables are left out."""
    institutions: dict[str, tuple[str, str | None, str]] = {}
    countries: dict[str, tuple[str, str]] = {}
    affiliation: dict[str, list[str]] = {SOURCE_COLUMN: [], TARGET_COLUMN: [], ORIGIN_COLUMN: []}
    in_country: dict[str, list[str]] = {SOURCE_COLUMN: [], TARGET_COLUMN: [], ORIGIN_COLUMN: []}
    for paper, (found, where) in papers.items():
        seen_inst: set[str] = set()
        seen_country: set[str] = set()
        for item in found:
            key = institution_id(item)
            if key is not None and key not in seen_inst:
                seen_inst.add(key)
                institutions.setdefault(key, (item.institution or key, item.country, where))
                for column, value in zip(affiliation, (paper, key, where)):
                    affiliation[column].append(value)
            if item.country and item.country not in seen_country:
                seen_country.add(item.country)
                countries.setdefault(item.country, (_country_name(item.country), where))
                for column, value in zip(in_country, (paper, item.country, where)):
                    in_country[column].append(value)
    nodes = {
        "Institution": pd.DataFrame(
            {
                "id": list(institutions),
                "name": [v[0] for v in institutions.values()],
                "country": [v[1] for v in institutions.values()],
                ORIGIN_COLUMN: [v[2] for v in institutions.values()],
            }
        ),
        "Country": pd.DataFrame(
            {
                "code": list(countries),
                "name": [v[0] for v in countries.values()],
                ORIGIN_COLUMN: [v[1] for v in countries.values()],
            }
        ),
    }
    rels = {"AFFILIATION": pd.DataFrame(affiliation), "IN_COUNTRY": pd.DataFrame(in_country)}
    return {k: v for k, v in nodes.items() if len(v)}, {k: v for k, v in rels.items() if len(v)}


_NAMES = {code: name.title() for name, code in reversed(list(COUNTRY_CODES.items()))}  # the first name listed
_NAMES.update({"US": "United States", "GB": "United Kingdom", "CN": "China", "KR": "South Korea", "DE": "Germany"})


def _country_name(code: str) -> str:
    """A country's display name ("IT" -> "Italy")."""
    return _NAMES.get(code, code)


__all__ = [
    "COUNTRY_CODES",
    "INSTITUTION_WORDS",
    "Affiliation",
    "affiliation_tables",
    "country_code",
    "institution_id",
    "openalex_affiliations",
    "scopus_affiliations",
    "split_wos_addresses",
    "wos_addresses",
]
