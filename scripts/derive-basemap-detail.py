#!/usr/bin/env python3
"""Derives Data/basemap-detail/ST.geojson.gz, one file per U.S. state: the web map's detail at
city zoom, loaded by the map for the states in view once it is zoomed in to 7 or more (no tile
server). Each file has its `bbox`, which the server indexes.

- U.S. county boundaries: the Census Bureau's 2016 cartographic boundary file
  `cb_2016_us_county_500k` (public domain), as shipped in the PyPI package plotly-geo 1.0.0,
  simplified to ~0.005° (about 500 m) and drawn as lines. Alaska's islands west of 180° are
  moved by -360°, as in the base layer.
- Place names: the U.S. places of 1,000 people or more from the project's own gazetteer
  (Data/gazetteer.db: GeoNames, CC BY 4.0, see docs/DATA.md), with their population, so the
  map labels the larger ones first (and towns under 10,000 only once zoomed in to 10).
  Issue 46: the small towns a person looks for (Marfa, TX: 1,733 people) had no name at all
  when the cut was 10,000.

    python3 -m venv /tmp/geo && /tmp/geo/bin/pip install plotly-geo==1.0.0 pyshp==3.1.6 shapely==2.2.0
    /tmp/geo/bin/python scripts/derive-basemap-detail.py

The place names alone, with nothing but Python and the gazetteer (the counties are read back
from the files as they are, and the water files are left alone):

    python3 scripts/derive-basemap-detail.py --places

Beside them, Data/basemap-water/ST.geojson.gz holds each state's water: lakes, filled (GSHHG
level 2, lakes of 2 km² or more) and major rivers (WDBII classes 1 and 2), from GSHHG 2.3.7
(LGPL-3+) as shipped in Debian's gmt-gshhg-high and dumped by Debian's gmt (`gmt coast -M`),
simplified to ~0.002°. They are files of their own because their licence is: LGPL-3+
(Data/basemap-water/COPYING and COPYING.LESSER).

    apt-get install gmt gmt-gshhg-high

The whole is checked to stay under 1.5 MB compressed (2 MB with the water), and each state's
file under 200 KB (docs/DATA.md).
"""
import glob
import gzip
import json
import os
import sqlite3
import subprocess
import sys

if sys.argv[1:] != ["--places"]:
    # The geometry's packages; `--places` needs none of them.
    import shapely

    import _plotly_geo

    from basemap_geometry import records, rounded, unwrap_alaska

    PACKAGE_DATA = os.path.join(os.path.dirname(_plotly_geo.__file__), "package_data")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "Data", "basemap-detail")
WATER = os.path.join(ROOT, "Data", "basemap-water")
BUDGET, WATER_BUDGET, STATE_BUDGET = 1_500_000, 500_000, 200_000
LEAST_PEOPLE = 1000
SOURCES = ["U.S. Census Bureau cb_2016_us_county_500k (public domain), via PyPI plotly-geo 1.0.0",
           "GeoNames places of 1,000 people or more (CC BY 4.0), via Data/gazetteer.db"]


def states():
    """USPS code by FIPS code, and each state's outline (for its box)."""
    result = {}
    for properties, geometry in records(os.path.join(PACKAGE_DATA, "cb_2016_us_state_500k.shp")):
        if properties["STUSPS"] == "AK":
            geometry = unwrap_alaska(geometry)
        result[properties["STATEFP"]] = (properties["STUSPS"], geometry)
    return result


def county_lines(fips):
    """Each state's county boundaries as lines (shared edges once), simplified together."""
    by_state = {}
    for properties, geometry in records(os.path.join(PACKAGE_DATA, "cb_2016_us_county_500k.shp")):
        if properties.get("STATEFP") == "02":
            geometry = unwrap_alaska(geometry)
        by_state.setdefault(properties["STATEFP"], []).append(geometry)
    result = {}
    for code, polygons in by_state.items():
        if code not in fips:
            continue
        simplified = shapely.coverage_simplify(polygons, TOLERANCE)
        result[fips[code][0]] = shapely.union_all([shapely.boundary(polygon) for polygon in simplified])
    return result


def gmt_lines(box, *options):
    """The line segments `gmt coast -M` dumps for the box (west, south, east, north)."""
    west, south, east, north = box
    text = subprocess.run(["gmt", "coast", "-R%.3f/%.3f/%.3f/%.3f" % (west - 0.01, east + 0.01, south - 0.01, north + 0.01),
                           "-Dh", "-M", *options], check=True, capture_output=True, text=True).stdout
    lines, current = [], []
    for row in text.splitlines():
        if row.startswith(">"):
            if len(current) > 1:
                lines.append(current)
            current = []
        elif row.strip():
            lon, lat = row.split()[:2]
            current.append((float(lon), float(lat)))
    if len(current) > 1:
        lines.append(current)
    return shapely.MultiLineString(lines) if lines else None


def lakes(lines):
    """Lake shores as filled polygons: GSHHG's shores come out of `gmt coast -M` cut at the
    edges of its bins, and the pieces of one shore share their end points, so merging them
    closes each lake that lies in the box. A shore the box cuts stays a line."""
    merged = shapely.line_merge(lines)
    polygons, open_lines = [], []
    for line in getattr(merged, "geoms", [merged]):
        if line.is_closed and len(line.coords) >= 4:
            polygon = shapely.make_valid(shapely.Polygon(line).simplify(0.002))
            polygons += [part for part in getattr(polygon, "geoms", [polygon])
                         if part.geom_type == "Polygon" and not part.is_empty]
        else:
            open_lines.append(line.simplify(0.002))
    return [geometry for geometry in (shapely.MultiPolygon(polygons) if polygons else None,
                                      shapely.MultiLineString(open_lines) if open_lines else None)
            if geometry is not None and not geometry.is_empty]


def water(box):
    """Lakes (level 2, 2 km² and more: filled where the box holds the whole shore) and major
    rivers (classes 1 and 2) in the box."""
    features = []
    for kind, options in [("lake", ["-A2/2/2", "-W"]), ("river", ["-I1", "-I2"])]:
        lines = gmt_lines(box, *options)
        if lines is None:
            continue
        for geometry in lakes(lines) if kind == "lake" else [lines.simplify(0.002)]:
            if not geometry.is_empty:
                features.append({"type": "Feature", "properties": {"kind": kind}, "geometry": rounded(geometry, 3)})
    return features


def places():
    """The U.S. places of 1,000 people or more, by state (GeoNames' admin1 is the USPS code)."""
    connection = sqlite3.connect(os.path.join(ROOT, "Data", "gazetteer.db"))
    rows = connection.execute(
        "SELECT admin1, name, population, lat, lon FROM place WHERE country = 'US' AND population >= ? "
        "ORDER BY population DESC, id", (LEAST_PEOPLE,))
    result = {}
    for state, name, population, lat, lon in rows:
        result.setdefault(state, []).append(
            {"type": "Feature", "properties": {"kind": "place", "name": name, "population": population},
             "geometry": {"type": "Point", "coordinates": [round(lon, 3), round(lat, 3)]}})
    return result


def packed(collection):
    """A state's file as written: compact JSON, gzip without a time stamp (same input, same bytes)."""
    data = gzip.compress(json.dumps(collection, separators=(",", ":"), ensure_ascii=False).encode(), 9, mtime=0)
    if len(data) > STATE_BUDGET:
        sys.exit(f"{collection['properties']['state']}: {len(data)} bytes compressed, over {STATE_BUDGET}")
    return data


def places_only():
    """`--places`: each state's file with its place names taken again from the gazetteer, its
    county lines and box kept as they are."""
    names = places()
    written = {}
    for path in sorted(glob.glob(os.path.join(OUTPUT, "*.geojson.gz"))):
        with gzip.open(path) as handle:
            collection = json.load(handle)
        state = collection["properties"]["state"]
        collection["properties"]["sources"] = SOURCES
        collection["features"] = [feature for feature in collection["features"] if feature["properties"]["kind"] != "place"]
        collection["features"] += names.get(state, [])
        written[path] = packed(collection)
    total = sum(len(data) for data in written.values())
    if total > BUDGET:
        sys.exit(f"detail too large: {total} bytes compressed")
    for path, data in written.items():
        with open(path, "wb") as handle:
            handle.write(data)
    print(f"{OUTPUT}: {len(written)} states, {sum(len(names.get(os.path.basename(p)[:2], [])) for p in written)} places, "
          f"{total} bytes compressed")


def main():
    if sys.argv[1:] == ["--places"]:
        places_only()
        return
    fips = states()
    lines = county_lines(fips)
    names = places()
    os.makedirs(OUTPUT, exist_ok=True)
    os.makedirs(WATER, exist_ok=True)
    total = water_total = 0
    for code, (state, outline) in sorted(fips.items(), key=lambda item: item[1][0]):
        features = []
        if state in lines:
            features.append({"type": "Feature", "properties": {"kind": "county"}, "geometry": rounded(lines[state], 3)})
        features += names.get(state, [])
        west, south, east, north = outline.bounds
        collection = {"type": "FeatureCollection", "bbox": [round(west, 3), round(south, 3), round(east, 3), round(north, 3)],
                      "properties": {"state": state, "sources": SOURCES},
                      "features": features}
        data = packed(collection)
        with open(os.path.join(OUTPUT, state + ".geojson.gz"), "wb") as handle:
            handle.write(data)
        total += len(data)
        if state == "AK":
            continue  # GMT's box cannot cross 180° as the state is drawn; Alaska has no water file
        waters = {"type": "FeatureCollection", "bbox": collection["bbox"],
                  "properties": {"state": state, "sources": [
                      "GSHHG 2.3.7 (LGPL-3+): lakes and WDBII rivers, via Debian gmt-gshhg-high and gmt coast"]},
                  "features": water(outline.bounds)}
        data = gzip.compress(json.dumps(waters, separators=(",", ":")).encode(), 9, mtime=0)
        with open(os.path.join(WATER, state + ".geojson.gz"), "wb") as handle:
            handle.write(data)
        water_total += len(data)
    if total > BUDGET or water_total > WATER_BUDGET:
        sys.exit(f"detail too large: {total} + {water_total} bytes compressed")
    print(f"{OUTPUT}: {len(fips)} states, {sum(len(v) for v in names.values())} places, {total} bytes compressed; "
          f"water {water_total} bytes")


TOLERANCE = 0.005

if __name__ == "__main__":
    main()
