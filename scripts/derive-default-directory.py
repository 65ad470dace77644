#!/usr/bin/env python3
"""Derive Data/clinics.csv, the embedded default directory, from the HIFLD Hospitals layer.

Source: HIFLD (Homeland Infrastructure Foundation-Level Data) "Hospitals", U.S. Department of
Homeland Security, public domain (a work of the U.S. government); snapshot of about 2019-2020,
sha256 bc57c90b0664bdee034d373058021c9dc5b1e37e6845407fdcc4ae45f61ff3a6.

Keeps the OPEN hospitals only, in the project's own clinic format (see docs/DATA.md). The
HIFLD `ID` becomes the external id; `TYPE = CHILDREN` marks a pediatric clinic; every row is
a hospital. Missing values (`NOT AVAILABLE`, `-999`) become empty fields. Time zones are left
empty: ClinicKit derives them when it imports the file.

Usage: python3 scripts/derive-default-directory.py ../shared/data/hifld-hospitals.csv Data/clinics.csv
"""
import csv
import sys
import unicodedata

MISSING = {"NOT AVAILABLE", "-999", ""}
COLUMNS = ["external_id", "name", "address", "city", "state", "zip", "phone", "website",
           "category", "is_pediatric", "is_hospital", "lat", "lon", "time_zone", "description"]


def clean(value):
    # A few source rows carry stray characters: U+001E between words of a name, U+200E after
    # a website. Control characters become spaces, format characters (Unicode Cf) go.
    value = "".join(" " if unicodedata.category(c) == "Cc" else c
                    for c in (value or "") if unicodedata.category(c) != "Cf")
    value = " ".join(value.split())
    return "" if value in MISSING else value


def describe(kind, beds):
    text = kind.capitalize() + " hospital" if kind else "Hospital"
    if beds:
        text += f", {beds} beds"
    return text


def main(source, target):
    with open(source, encoding="utf-8-sig", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["STATUS"] == "OPEN"]
    rows.sort(key=lambda r: r["ID"])
    with open(target, "w", encoding="utf-8", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(COLUMNS)
        for r in rows:
            kind = clean(r["TYPE"])
            beds = clean(r["BEDS"])
            out.writerow([
                r["ID"].strip(), clean(r["NAME"]), clean(r["ADDRESS"]), clean(r["CITY"]),
                clean(r["STATE"]), clean(r["ZIP"]), clean(r["TELEPHONE"]), clean(r["WEBSITE"]),
                kind, "1" if kind == "CHILDREN" else "0", "1",
                # Seven decimals is about 1 cm: more than the source's own accuracy.
                f"{float(r['LATITUDE']):.7f}", f"{float(r['LONGITUDE']):.7f}",
                "", describe(kind, beds),
            ])
    print(f"wrote {len(rows)} clinics to {target}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
