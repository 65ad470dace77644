#!/usr/bin/env python3
"""Derive Data/timezones.db, the offline time-zone polygons, from timezone-boundary-builder.

Source: the time-zone boundaries of timezone-boundary-builder (release 2026c, the variant
"with oceans": the Etc/GMT±N zones cover the high seas), built from OpenStreetMap data,
licensed under the Open Database License (ODbL) 1.0, as packaged on PyPI by
timezonefinder-data 3.2026.3.post1 (data: ODbL 1.0) and read through timezonefinder 9.0.0
(code: MIT). The list of U.S. zones comes from the IANA tz database's zone.tab as packaged
by tzdata 2026.6 (public domain). Geometry work: shapely 2.2.0 (GEOS 3.14.1).

Install (Python 3.11; a fresh machine needs only PyPI):
  python3 -m venv /tmp/derive/venv && . /tmp/derive/venv/bin/activate
  pip install timezonefinder==9.0.0 timezonefinder-data==3.2026.3.post1 shapely==2.2.0 \
      numpy==2.4.6 h3==4.5.0 flatbuffers==25.12.19 cffi==2.1.1 pycparser==3.12 tzdata==2026.6

Usage:
  python3 scripts/derive-timezones.py build Data/timezones.db --clinics Data/clinics.csv
  python3 scripts/derive-timezones.py check Data/timezones.db --clinics Data/clinics.csv \
      [--gazetteer Data/gazetteer.tsv] [--json /tmp/derive/tz-check.json]

build (about 2.5 minutes and 7 GB of memory on 2 cores; two builds, and a build in a fresh
venv, gave byte-identical files with Python 3.11.7 / SQLite 3.40.1):
1. Reads every zone of the source at full resolution (TimezoneFinder(in_memory=True)
   .get_geometry(tz_name=..., coords_as_pairs=True); rings are closed here).
2. Makes the zones a clean polygonal coverage: the source has overlapping zones in
   disputed areas (Asia/Shanghai and Asia/Urumqi over Xinjiang, Sitka and Vancouver in the
   Dixon Entrance, ...) and hair-thin gaps. All rings are noded together and polygonized;
   each face goes to the zone that contains it, where several do to the one
   timezonefinder's timezone_at answers at the face's inner point, and where none does (a
   gap) to timezonefinder's answer if that zone touches the face, else to the neighbour
   with the longest shared border.
3. Layer 'us': every zone of zone.tab whose country is US, PR, VI, GU, MP, AS or PW, plus
   the zone timezone_at gives for any clinic of --clinics. Layer 'world': all other zones.
4. Keeps the 'us' zones at full resolution and simplifies the 'world' zones with GEOS
   coverage simplification (Visvalingam-Whyatt, WORLD_TOLERANCE; borders shared by two
   world zones stay identical), keeping the outer boundary of the 'world' set as it is, so
   the borders between 'us' and 'world' zones and the ±180° meridians are the same in
   both layers.
5. Splits multipolygons into polygons, and cuts every polygon of more than MAX_VERTICES
   vertices along a regular 2° grid (bisection along grid lines, then quadrants of a cell:
   1°, 0.5°, ... where a piece is still too big). Pieces of one polygon tile it exactly.
6. Writes one row per piece (ISO WKB, little-endian, 2D, x = longitude, y = latitude),
   sorted by layer, tzid and envelope, then VACUUMs.

check: looks up every clinic of --clinics in the file ('us' layer first, then 'world',
then the nearest polygon) and compares with timezonefinder at full resolution, plus
reference points; with --gazetteer also counts the clinics whose zone differs from the
nearest place of the old gazetteer.tsv in the same state.
"""
import argparse
import csv
import json
import math
import os
import sqlite3
import sys
import time
from datetime import datetime, timezone as dt_timezone
from importlib import metadata, resources

import numpy as np
import shapely
from shapely.geometry import Polygon, box

WORLD_TOLERANCE = 0.01  # degrees (about 1.1 km)
MAX_VERTICES = 2000
GRID = 2.0  # degrees
MIN_CELL = GRID / 64
US_COUNTRIES = {"US", "PR", "VI", "GU", "MP", "AS", "PW"}
PACKAGES = ["timezonefinder", "timezonefinder-data", "shapely", "numpy", "tzdata"]

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE zone_polygon (
  id INTEGER PRIMARY KEY,
  tzid TEXT NOT NULL,
  layer TEXT NOT NULL CHECK (layer IN ('us','world')),
  min_lon REAL NOT NULL, min_lat REAL NOT NULL, max_lon REAL NOT NULL, max_lat REAL NOT NULL,
  wkb BLOB NOT NULL
);
CREATE INDEX zone_polygon_box ON zone_polygon (min_lon, max_lon);
"""

REFERENCE_POINTS = [
    # (label, lat, lon, expected zone): points in each town centre
    ("Vincennes, IN (courthouse square)", 38.6773, -87.5286, "America/Indiana/Vincennes"),
    ("Apalachicola, FL (downtown)", 29.7255, -84.9836, "America/New_York"),
    ("Eufaula, AL (downtown)", 31.8913, -85.1455, "America/Chicago"),
    ("Tuba City, AZ (Navajo Nation)", 36.1350, -111.2399, "America/Denver"),
    ("Page, AZ (downtown)", 36.9147, -111.4558, "America/Phoenix"),
    ("Phenix City, AL (downtown)", 32.4710, -85.0008, "America/New_York"),
    ("Tell City, IN (downtown)", 37.9514, -86.7678, "America/Indiana/Tell_City"),
    ("El Paso, TX (downtown)", 31.7587, -106.4869, "America/Denver"),
    ("Pensacola, FL (downtown)", 30.4213, -87.2169, "America/Chicago"),
    ("Adak, AK (town)", 51.8800, -176.6581, "America/Adak"),
]

US_STATES = {
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA",
    "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM",
    "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA",
    "WV", "WI", "WY",
}

# The fallback of the old approach (Sources/ClinicKit/Geo/ZoneApproximation.swift).
STATE_ZONE = {
    "AL": "America/Chicago", "AK": "America/Anchorage", "AZ": "America/Phoenix",
    "AR": "America/Chicago", "CA": "America/Los_Angeles", "CO": "America/Denver",
    "CT": "America/New_York", "DE": "America/New_York", "DC": "America/New_York",
    "FL": "America/New_York", "GA": "America/New_York", "HI": "Pacific/Honolulu",
    "ID": "America/Boise", "IL": "America/Chicago", "IN": "America/Indiana/Indianapolis",
    "IA": "America/Chicago", "KS": "America/Chicago", "KY": "America/New_York",
    "LA": "America/Chicago", "ME": "America/New_York", "MD": "America/New_York",
    "MA": "America/New_York", "MI": "America/Detroit", "MN": "America/Chicago",
    "MS": "America/Chicago", "MO": "America/Chicago", "MT": "America/Denver",
    "NE": "America/Chicago", "NV": "America/Los_Angeles", "NH": "America/New_York",
    "NJ": "America/New_York", "NM": "America/Denver", "NY": "America/New_York",
    "NC": "America/New_York", "ND": "America/Chicago", "OH": "America/New_York",
    "OK": "America/Chicago", "OR": "America/Los_Angeles", "PA": "America/New_York",
    "RI": "America/New_York", "SC": "America/New_York", "SD": "America/Chicago",
    "TN": "America/Chicago", "TX": "America/Chicago", "UT": "America/Denver",
    "VT": "America/New_York", "VA": "America/New_York", "WA": "America/Los_Angeles",
    "WV": "America/New_York", "WI": "America/Chicago", "WY": "America/Denver",
    "PR": "America/Puerto_Rico", "VI": "America/St_Thomas", "GU": "Pacific/Guam",
    "MP": "Pacific/Saipan", "AS": "Pacific/Pago_Pago", "PW": "Pacific/Palau",
}


def log(*args):
    print(f"[{time.strftime('%H:%M:%S')}]", *args, file=sys.stderr, flush=True)


def versions():
    return {name: metadata.version(name) for name in PACKAGES}


def finder():
    from timezonefinder import TimezoneFinder
    return TimezoneFinder(in_memory=True)


def read_clinics(path):
    with open(path, encoding="utf-8-sig", newline="") as f:
        return [row for row in csv.DictReader(f)]


# ---------------------------------------------------------------- build

def load_source(tf):
    """{tzid: [Polygon, ...]} at full resolution."""
    zones = {}
    for name in sorted(tf.timezone_names):
        polygons = []
        for rings in tf.get_geometry(tz_name=name, coords_as_pairs=True):
            closed = []
            for ring in rings:
                ring = [(float(x), float(y)) for x, y in ring]
                if ring[0] != ring[-1]:
                    ring.append(ring[0])
                closed.append(ring)
            polygons.append(Polygon(closed[0], closed[1:]))
        zones[name] = polygons
    return zones


def clean_coverage(zones, tf):
    """Nodes and polygonizes all rings; returns ({tzid: geometry}, statistics)."""
    names = sorted(zones)
    parts, owner = [], []
    for name in names:
        for polygon in zones[name]:
            parts.append(polygon)
            owner.append(name)
    parts = np.array(parts)
    rings = []
    for polygon in parts:
        rings.append(shapely.LineString(polygon.exterior.coords))
        rings.extend(shapely.LineString(hole.coords) for hole in polygon.interiors)
    log(f"noding {len(rings)} rings, {int(shapely.get_num_coordinates(parts).sum())} vertices")
    noded = shapely.unary_union(shapely.MultiLineString(rings))
    faces = shapely.get_parts(shapely.polygonize(shapely.get_parts(noded)))
    log(f"{len(faces)} faces")
    tree = shapely.STRtree(parts)
    points = shapely.point_on_surface(faces)
    face_index, part_index = tree.query(points, predicate="within")
    containing = {}
    for f, p in zip(face_index.tolist(), part_index.tolist()):
        containing.setdefault(f, set()).add(owner[p])
    stats = {"faces": len(faces), "overlap_faces": 0, "overlap_area_deg2": 0.0, "gap_faces": 0,
             "gap_area_deg2": 0.0, "overlaps": {}}
    assigned = {}
    for f in range(len(faces)):
        zones_here = containing.get(f, set())
        point = points[f]
        if len(zones_here) == 1:
            assigned[f] = next(iter(zones_here))
            continue
        answer = tf.timezone_at(lng=point.x, lat=point.y)
        if len(zones_here) > 1:
            choice = answer if answer in zones_here else sorted(zones_here)[0]
            stats["overlap_faces"] += 1
            stats["overlap_area_deg2"] += faces[f].area
            key = " / ".join(sorted(zones_here))
            entry = stats["overlaps"].setdefault(key, {"area_deg2": 0.0, "given_to": set()})
            entry["area_deg2"] += faces[f].area
            entry["given_to"].add(choice)
        else:
            stats["gap_faces"] += 1
            stats["gap_area_deg2"] += faces[f].area
            touching = tree.query(faces[f], predicate="intersects").tolist()
            shared = {}
            for p in touching:
                length = shapely.intersection(faces[f].boundary, parts[p].boundary).length
                shared[owner[p]] = shared.get(owner[p], 0.0) + length
            if answer in shared:
                choice = answer
            else:
                choice = max(sorted(shared), key=lambda z: shared[z])
        assigned[f] = choice
    by_zone = {}
    for f, name in assigned.items():
        by_zone.setdefault(name, []).append(faces[f])
    clean = {}
    for name in names:
        if name not in by_zone:
            log(f"warning: {name} lost all its area")
            continue
        clean[name] = shapely.coverage_union_all(by_zone[name])
    for entry in stats["overlaps"].values():
        entry["given_to"] = sorted(entry["given_to"])
    return clean, stats


def us_zone_list(clean, tf, clinics):
    tab = resources.files("tzdata").joinpath("zoneinfo", "zone.tab").read_text(encoding="utf-8")
    from_tab = set()
    for line in tab.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        if fields[0] in US_COUNTRIES:
            from_tab.add(fields[2])
    from_clinics = set()
    for row in clinics:
        zone = tf.timezone_at(lng=float(row["lon"]), lat=float(row["lat"]))
        if zone:
            from_clinics.add(zone)
    us = sorted(z for z in from_tab | from_clinics if z in clean)
    missing = sorted((from_tab | from_clinics) - set(clean))
    return us, sorted(from_tab), sorted(from_clinics), missing


def fix_validity(geometry):
    if geometry.is_valid:
        return geometry, False
    fixed = shapely.make_valid(geometry, method="structure", keep_collapsed=False)
    polygons = [p for p in shapely.get_parts(fixed) if p.geom_type == "Polygon" and not p.is_empty]
    return shapely.MultiPolygon(polygons), True


def ring_polygons(geometry):
    out = []
    for part in shapely.get_parts(geometry):
        if part.geom_type == "Polygon":
            if not part.is_empty and part.area > 0:
                out.append(part)
        elif part.geom_type in ("MultiPolygon", "GeometryCollection"):
            out.extend(ring_polygons(part))
    return out


def cut(polygon, x0, y0, x1, y1, out):
    """Cuts polygon (lying in the grid-aligned box) until each piece has at most MAX_VERTICES."""
    if shapely.get_num_coordinates(polygon) <= MAX_VERTICES:
        out.append(polygon)
        return
    width, height = x1 - x0, y1 - y0
    if width <= MIN_CELL and height <= MIN_CELL:
        out.append(polygon)
        return
    if width > GRID or height > GRID:
        # bisect along a line of the 2° grid across the longer side
        if width >= height:
            cells = round(width / GRID)
            mid = x0 + (cells // 2) * GRID if cells > 1 else x0 + width / 2
            halves = [(x0, y0, mid, y1), (mid, y0, x1, y1)]
        else:
            cells = round(height / GRID)
            mid = y0 + (cells // 2) * GRID if cells > 1 else y0 + height / 2
            halves = [(x0, y0, x1, mid), (x0, mid, x1, y1)]
    else:
        # quadrants of a cell
        mx, my = x0 + width / 2, y0 + height / 2
        halves = [(x0, y0, mx, my), (mx, y0, x1, my), (x0, my, mx, y1), (mx, my, x1, y1)]
    for bx0, by0, bx1, by1 in halves:
        piece = shapely.intersection(polygon, box(bx0, by0, bx1, by1))
        for part in ring_polygons(piece):
            part, _ = fix_validity(part)
            for p in ring_polygons(part):
                cut(p, bx0, by0, bx1, by1, out)


def pieces_of(geometry):
    out = []
    for polygon in ring_polygons(geometry):
        minx, miny, maxx, maxy = polygon.bounds
        x0 = max(-180.0, math.floor(minx / GRID) * GRID)
        y0 = max(-90.0, math.floor(miny / GRID) * GRID)
        x1 = min(180.0, math.ceil(maxx / GRID) * GRID)
        y1 = min(90.0, math.ceil(maxy / GRID) * GRID)
        if x1 <= x0:
            x1 = x0 + GRID
        if y1 <= y0:
            y1 = y0 + GRID
        cut(polygon, x0, y0, x1, y1, out)
    return out


def haversine_m(lon1, lat1, lon2, lat2):
    r = 6371008.8
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dphi, dl = p2 - p1, np.radians(lon2 - lon1)
    a = np.sin(dphi / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * r * np.arcsin(np.sqrt(np.minimum(1.0, a)))


def build(args):
    started = time.time()
    tf = finder()
    clinics = read_clinics(args.clinics)
    log("reading the source")
    zones = load_source(tf)
    source_vertices = sum(int(shapely.get_num_coordinates(p)) for ps in zones.values() for p in ps)
    source_polygons = sum(len(ps) for ps in zones.values())
    out_of_range = [n for n, ps in zones.items() for p in ps
                    if p.bounds[0] < -180 or p.bounds[2] > 180 or p.bounds[1] < -90 or p.bounds[3] > 90]
    log(f"{len(zones)} zones, {source_polygons} polygons, {source_vertices} vertices; "
        f"outside ±180/±90: {len(out_of_range)}")
    clean, stats = clean_coverage(zones, tf)
    names = sorted(clean)
    array = np.array([clean[n] for n in names])
    coverage_ok = bool(shapely.coverage_is_valid(array))
    log(f"clean coverage valid: {coverage_ok}; overlaps {stats['overlap_faces']} faces "
        f"{stats['overlap_area_deg2']:.4f} deg², gaps {stats['gap_faces']} faces "
        f"{stats['gap_area_deg2']:.2e} deg²")
    us, from_tab, from_clinics, missing = us_zone_list(clean, tf, clinics)
    log(f"{len(us)} 'us' zones; not in the source: {missing}")
    us_set = set(us)
    world_idx = [i for i, n in enumerate(names) if n not in us_set]
    log("coverage simplification of the world zones")
    coarse = shapely.coverage_simplify(array[world_idx], WORLD_TOLERANCE, simplify_boundary=False)
    result = {}
    for i, n in enumerate(names):
        if n in us_set:
            result[n] = ("us", array[i])
    for j, i in enumerate(world_idx):
        result[names[i]] = ("world", coarse[j])
    fixed = []
    for n in names:
        layer, geometry = result[n]
        geometry, was_fixed = fix_validity(geometry)
        if was_fixed:
            fixed.append(n)
        result[n] = (layer, geometry)
    log(f"made valid after simplification: {fixed}")
    us_vertices = int(sum(shapely.get_num_coordinates(result[n][1]) for n in us))
    world_vertices_source = int(sum(shapely.get_num_coordinates(array[i]) for i in world_idx))
    world_vertices = int(sum(shapely.get_num_coordinates(result[names[i]][1]) for i in world_idx))
    # the borders between the layers must be the same in both: the outer boundary of the world
    # zones before and after simplification
    outer_before = shapely.coverage_union_all(array[world_idx]).boundary
    outer_after = shapely.coverage_union_all(np.array([result[names[i]][1] for i in world_idx])).boundary
    borders_kept = bool(shapely.equals(outer_before, outer_after))
    log(f"'us' vertices {us_vertices} (full resolution); world {world_vertices_source} -> {world_vertices}; "
        f"us/world borders identical: {borders_kept}")
    rows = []
    for n in names:
        layer, geometry = result[n]
        for piece in pieces_of(geometry):
            if not piece.is_valid:
                raise SystemExit(f"invalid piece in {n}")
            minx, miny, maxx, maxy = piece.bounds
            if minx < -180 or maxx > 180 or miny < -90 or maxy > 90:
                raise SystemExit(f"piece outside ±180/±90 in {n}")
            wkb = shapely.to_wkb(piece, output_dimension=2, byte_order=1, flavor="iso", include_srid=False)
            rows.append((0 if layer == "us" else 1, n, layer, minx, miny, maxx, maxy, wkb))
    rows.sort(key=lambda r: (r[0], r[1], r[3], r[4], r[5], r[6], r[7]))
    log(f"{len(rows)} rows")
    pieces_vertices = sum((len(r[7]) - 9) // 16 for r in rows)
    meta = {
        "source": "timezone-boundary-builder (https://github.com/evansiroky/timezone-boundary-builder) "
                  "release " + tf.data_version + ", with oceans; data from OpenStreetMap contributors; "
                  "as packaged by timezonefinder-data",
        "licence": "Open Database License (ODbL) 1.0 (https://opendatacommons.org/licenses/odbl/1-0/). "
                   "Contains information from timezone-boundary-builder, which is made available "
                   "under the ODbL; (c) OpenStreetMap contributors",
        "source_release": tf.data_version,
        "packages": json.dumps(versions(), sort_keys=True),
        "geos": shapely.geos_version_string,
        "us_tolerance_deg": "0 (full resolution)",
        "world_tolerance_deg": repr(WORLD_TOLERANCE),
        "simplifier": "shapely.coverage_simplify (GEOS CoverageSimplifier, Visvalingam-Whyatt) on the "
                      "world zones with simplify_boundary=False: their borders with 'us' zones and the "
                      "±180° meridians are kept as they are",
        "max_vertices_per_row": str(MAX_VERTICES),
        "grid_deg": repr(GRID),
        "us_zones": ",".join(us),
        "lookup": "point in polygon: layer 'us' first, then 'world'; if none contains the point, "
                  "the nearest polygon",
        "wkb": "ISO WKB, little-endian, 2D Polygon, x = longitude, y = latitude (WGS 84)",
        "built_by": "python3 scripts/derive-timezones.py build Data/timezones.db --clinics Data/clinics.csv",
        "source_zones": str(len(zones)),
    }
    if os.path.exists(args.output):
        os.remove(args.output)
    db = sqlite3.connect(args.output)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(meta.items()))
    db.executemany(
        "INSERT INTO zone_polygon (id, tzid, layer, min_lon, min_lat, max_lon, max_lat, wkb) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(i + 1,) + r[1:] for i, r in enumerate(rows)])
    db.commit()
    db.execute("VACUUM")
    db.close()
    summary = {
        "source_zones": len(zones), "source_polygons": source_polygons, "source_vertices": source_vertices,
        "source_out_of_range_polygons": out_of_range, "clean_coverage_valid": coverage_ok,
        "coverage_stats": stats, "us_zones": us, "us_from_zone_tab": from_tab,
        "us_from_clinics": from_clinics, "missing": missing, "fixed_after_simplification": fixed,
        "us_vertices": us_vertices, "world_vertices_source": world_vertices_source,
        "world_vertices": world_vertices, "us_world_borders_identical": borders_kept,
        "rows": len(rows), "rows_us": sum(1 for r in rows if r[0] == 0),
        "vertices_stored": pieces_vertices, "bytes": os.path.getsize(args.output),
        "seconds": round(time.time() - started),
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1, sort_keys=True, default=str)
    log(json.dumps({k: v for k, v in summary.items() if k not in ("coverage_stats",)}, default=str))


# ---------------------------------------------------------------- check

class ZoneFile:
    def __init__(self, path):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.layers = {}
        for layer in ("us", "world"):
            rows = db.execute("SELECT tzid, wkb, min_lon, min_lat, max_lon, max_lat FROM zone_polygon "
                              "WHERE layer = ? ORDER BY id", (layer,)).fetchall()
            geoms = shapely.from_wkb([r[1] for r in rows])
            for r, g in zip(rows, geoms):
                b = g.bounds
                assert (r[2], r[3], r[4], r[5]) == b, "envelope differs from the polygon's"
            shapely.prepare(geoms)
            self.layers[layer] = ([r[0] for r in rows], geoms, shapely.STRtree(geoms))
        self.meta = dict(db.execute("SELECT key, value FROM meta"))
        db.close()

    def lookup(self, lon, lat):
        point = shapely.Point(lon, lat)
        for layer in ("us", "world"):
            names, geoms, tree = self.layers[layer]
            hits = sorted({names[i] for i in tree.query(point, predicate="intersects")})
            if hits:
                return hits[0], layer, len(hits)
        best = None
        for layer in ("us", "world"):
            names, geoms, tree = self.layers[layer]
            i = int(tree.query_nearest(point, all_matches=False)[0])
            d = shapely.distance(point, geoms[i])
            if best is None or d < best[0]:
                best = (d, names[i])
        return best[1], "nearest", 0


def utc_offsets(zone):
    from zoneinfo import ZoneInfo
    z = ZoneInfo(zone)
    return tuple(datetime(2026, m, 15, 12, tzinfo=dt_timezone.utc).astimezone(z).utcoffset().total_seconds() / 3600
                 for m in (1, 7))


def old_zones(clinics, gazetteer_path):
    """The old approach: the zone of the nearest gazetteer.tsv place in the clinic's state
    (U.S. states by admin1, territories by country), within 300 km, else ZoneApproximation."""
    places = {}
    with open(gazetteer_path, encoding="utf-8") as f:
        next(f)
        for line in f:
            gid, name, country, admin1, pop, tz, lat, lon, keys = line.rstrip("\n").split("\t")
            places.setdefault((country, admin1), []).append((float(lat), float(lon), tz, name))
            places.setdefault((country, None), []).append((float(lat), float(lon), tz, name))
    out = []
    for row in clinics:
        state = row["state"].strip().upper()
        lat, lon = float(row["lat"]), float(row["lon"])
        key = ("US", state) if state in US_STATES else (state, None)
        candidates = places.get(key, [])
        best = None
        for plat, plon, tz, name in candidates:
            d = float(haversine_m(lon, lat, plon, plat))
            if best is None or d < best[0]:
                best = (d, tz, name)
        if best and best[0] <= 300_000:
            out.append((best[1], best[2], best[0]))
        else:
            zone = "America/Adak" if state == "AK" and lon < -169.5 else STATE_ZONE.get(state, "?")
            out.append((zone, "(state fallback)", best[0] if best else None))
    return out


def check(args):
    tf = finder()
    zf = ZoneFile(args.database)
    clinics = read_clinics(args.clinics)
    result = {"meta": zf.meta}
    mismatches, certain_mismatch, uncertain, nearest, multi = [], [], 0, [], 0
    found = []
    for row in clinics:
        lon, lat = float(row["lon"]), float(row["lat"])
        zone, how, hits = zf.lookup(lon, lat)
        found.append(zone)
        full = tf.timezone_at(lng=lon, lat=lat)
        certain = tf.certain_timezone_at(lng=lon, lat=lat)
        if certain is None:
            uncertain += 1
        if how == "nearest":
            nearest.append({"id": row["external_id"], "name": row["name"], "zone": zone})
        if hits > 1:
            multi += 1
        if zone != full:
            mismatches.append({"id": row["external_id"], "name": row["name"], "state": row["state"],
                               "lat": lat, "lon": lon, "db": zone, "timezone_at": full, "how": how})
        if certain is not None and zone != certain:
            certain_mismatch.append(row["external_id"])
    counts = {}
    for z in found:
        counts[z] = counts.get(z, 0) + 1
    result["clinics"] = {
        "count": len(clinics), "mismatches_vs_timezone_at": mismatches,
        "mismatches_vs_certain_timezone_at": certain_mismatch,
        "certain_timezone_at_none": uncertain, "in_no_polygon": nearest,
        "in_several_polygons_of_one_layer": multi, "zones": dict(sorted(counts.items())),
    }
    refs = []
    for label, lat, lon, expected in REFERENCE_POINTS:
        zone, how, _ = zf.lookup(lon, lat)
        refs.append({"place": label, "lat": lat, "lon": lon, "expected": expected, "db": zone, "how": how,
                     "timezone_at": tf.timezone_at(lng=lon, lat=lat), "ok": zone == expected})
    result["reference_points"] = refs
    if args.gazetteer:
        old = old_zones(clinics, args.gazetteer)
        diff_zone, diff_offset = [], []
        for row, new, (oz, place, dist) in zip(clinics, found, old):
            if oz != new:
                item = {"id": row["external_id"], "name": row["name"], "city": row["city"],
                        "state": row["state"], "old": oz, "old_place": place,
                        "old_place_km": round(dist / 1000, 1) if dist is not None else None, "new": new}
                diff_zone.append(item)
                if utc_offsets(oz) != utc_offsets(new):
                    item["offsets_old"] = utc_offsets(oz)
                    item["offsets_new"] = utc_offsets(new)
                    diff_offset.append(item)
        result["old_approach"] = {"different_zone": len(diff_zone), "different_utc_offset": len(diff_offset),
                                  "items": diff_zone}
    # random points compared with timezonefinder: the whole globe (uniform by area), and boxes
    # around the contiguous U.S. and Alaska
    rng = np.random.default_rng(20261122)
    samples = {
        "globe": (rng.uniform(-180, 180, args.samples), np.degrees(np.arcsin(rng.uniform(-1, 1, args.samples)))),
        "contiguous_us_box": (rng.uniform(-125, -66, args.samples), rng.uniform(24, 50, args.samples)),
        "alaska_box": (rng.uniform(-180, -129, args.samples // 4), rng.uniform(51, 72, args.samples // 4)),
    }
    result["random_points"] = {}
    for label, (lons, lats) in samples.items():
        disagree, by_layer = [], {}
        for lon, lat in zip(lons.tolist(), lats.tolist()):
            zone, how, _ = zf.lookup(lon, lat)
            by_layer[how] = by_layer.get(how, 0) + 1
            full = tf.timezone_at(lng=lon, lat=lat)
            if zone != full:
                disagree.append({"lat": round(lat, 5), "lon": round(lon, 5), "db": zone, "how": how,
                                 "timezone_at": full})
        result["random_points"][label] = {"count": len(lons), "answered_by": by_layer, "disagree": disagree}
    # the rows themselves
    db = sqlite3.connect(f"file:{args.database}?mode=ro", uri=True)
    structure = {"rows": 0, "not_polygon": 0, "invalid": 0, "open_rings": 0, "out_of_range": 0,
                 "max_vertices": 0, "rows_over_limit": 0, "big_endian": 0, "envelope_mismatch": 0,
                 "rows_by_layer": {}, "zones_by_layer": {}}
    zones_seen = {}
    for tzid, layer, x0, y0, x1, y1, wkb in db.execute(
            "SELECT tzid, layer, min_lon, min_lat, max_lon, max_lat, wkb FROM zone_polygon ORDER BY id"):
        structure["rows"] += 1
        structure["rows_by_layer"][layer] = structure["rows_by_layer"].get(layer, 0) + 1
        zones_seen.setdefault(layer, set()).add(tzid)
        if wkb[0] != 1:
            structure["big_endian"] += 1
        g = shapely.from_wkb(wkb)
        if int.from_bytes(wkb[1:5], "little") != 3 or g.geom_type != "Polygon":
            structure["not_polygon"] += 1
        if not g.is_valid:
            structure["invalid"] += 1
        if any(not r.is_closed for r in shapely.get_rings(g)):
            structure["open_rings"] += 1
        if x0 < -180 or x1 > 180 or y0 < -90 or y1 > 90:
            structure["out_of_range"] += 1
        if (x0, y0, x1, y1) != g.bounds:
            structure["envelope_mismatch"] += 1
        n = int(shapely.get_num_coordinates(g))
        structure["max_vertices"] = max(structure["max_vertices"], n)
        structure["rows_over_limit"] += n > MAX_VERTICES
    structure["zones_by_layer"] = {k: len(v) for k, v in zones_seen.items()}
    structure["bytes"] = os.path.getsize(args.database)
    db.close()
    result["structure"] = structure
    text = json.dumps(result, indent=1, ensure_ascii=False, default=str)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text)
    print(f"clinics: {len(clinics)}, mismatches vs timezone_at: {len(mismatches)}, "
          f"vs certain_timezone_at: {len(certain_mismatch)}, in no polygon: {len(nearest)}")
    for r in refs:
        print(f"  {'ok ' if r['ok'] else 'BAD'} {r['place']} ({r['lat']}, {r['lon']}): {r['db']} [{r['how']}]")
    if args.gazetteer:
        print(f"old approach: {result['old_approach']['different_zone']} clinics in another zone, "
              f"{result['old_approach']['different_utc_offset']} with another UTC offset")
    for label, r in result["random_points"].items():
        print(f"random points, {label}: {len(r['disagree'])} of {r['count']} disagree with timezone_at")
    print("rows:", json.dumps(structure))
    return 0 if not mismatches and all(r["ok"] for r in refs) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("output")
    b.add_argument("--clinics", required=True)
    b.add_argument("--json")
    c = sub.add_parser("check")
    c.add_argument("database")
    c.add_argument("--clinics", required=True)
    c.add_argument("--gazetteer")
    c.add_argument("--samples", type=int, default=20000)
    c.add_argument("--json")
    args = parser.parse_args()
    if args.command == "build":
        build(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
