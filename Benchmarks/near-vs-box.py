#!/usr/bin/env python3
"""How a bounding-box `near` (HAPI FHIR's way: a latitude/longitude box around the point, the
matches sorted by distance in degrees) differs from the exact great-circle search that
`/fhir/r4/Location?near=` answers, on the directory in Data/clinics.csv and the points of
Tests/python/test_fhir.py. Prints one line per point (docs/FHIR.md quotes the table).

    python3 Benchmarks/near-vs-box.py [RADIUS_KM]
"""
import csv
import math
import os
import sys

R = 6_371_008.8
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POINTS = [
    ("Aleutians, east of 180°", 51.88, 179.99), ("Aleutians, west of 180°", 52.0, -179.9),
    ("West of American Samoa", -14.3, 179.5), ("Guam", 13.45, 144.75), ("Near the North Pole", 89.9, 0.0),
    ("Near the South Pole", -89.5, 45.0), ("Utqiagvik, Alaska", 71.3, -156.8), ("Hawaii", 19.7, -155.1),
    ("Manhattan", 40.7549, -73.9840), ("Anchorage", 61.2181, -149.9003), ("Fairbanks", 64.8378, -147.7164),
]


def haversine(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * R * math.asin(min(1, math.sqrt(a)))


def main():
    radius_km = float(sys.argv[1]) if len(sys.argv) > 1 else 500
    with open(os.path.join(ROOT, "Data", "clinics.csv"), newline="") as file:
        clinics = [(row["name"], float(row["lat"]), float(row["lon"])) for row in csv.DictReader(file)]
    print(f"{len(clinics)} clinics, radius {radius_km:g} km")
    print("| point | exact: nearest (km), clinics within | box: first by degrees (its true km), clinics in the box within the radius "
          "| of the exact 10 nearest, at the same rank in the box's order |")
    print("|---|---|---|---|")
    for label, lat, lon in POINTS:
        exact = sorted((haversine(lat, lon, c[1], c[2]), c[0]) for c in clinics)
        within = [e for e in exact if e[0] <= radius_km * 1000]
        dlat = radius_km / 111.32
        dlon = radius_km / (111.32 * max(math.cos(math.radians(lat)), 1e-9))
        box = [c for c in clinics if abs(c[1] - lat) <= dlat and abs(c[2] - lon) <= dlon]
        box.sort(key=lambda c: math.hypot(c[1] - lat, c[2] - lon))
        box_within = [c for c in box if haversine(lat, lon, c[1], c[2]) <= radius_km * 1000]
        nearest = f"{exact[0][1].title()} ({exact[0][0] / 1000:,.1f}), {len(within)}"
        first = (f"{box[0][0].title()} ({haversine(lat, lon, box[0][1], box[0][2]) / 1000:,.1f})" if box else "nothing")
        ranked = [e[1] for e in exact[:10]]
        boxed = [c[0] for c in box[:10]]
        same = sum(1 for a, b in zip(ranked, boxed) if a == b)
        print(f"| {label} ({lat}, {lon}) | {nearest} | {first}, {len(box_within)} | {same} of {min(10, len(ranked))} |")


if __name__ == "__main__":
    main()
