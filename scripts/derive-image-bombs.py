#!/usr/bin/env python3
"""Writes the two decoding bombs of issue 42 into Tests/ClinicImagesTests/Fixtures:

scan-bomb.jpg  a 10000 x 10000 greyscale progressive JPEG: one DC scan and 1,000 AC scans that
               are nothing but end-of-band runs (each scan a few dozen bytes; each makes the
               decoder walk all 1.56 million blocks again: about 20 s of a core);
deep.png       a 10000 x 10000 RGBA PNG of 16 bits a sample, all zeros (778 KB compressed,
               800 MB decoded).

Both are made from nothing (no input, no licence): `python3 scripts/derive-image-bombs.py`."""
import os
import struct
import zlib

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "Tests", "ClinicImagesTests", "Fixtures")
SIDE = 10000


def segment(marker, payload):
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


class Bits:
    """Entropy-coded bits, with 0xFF stuffed and the last byte padded with ones."""

    def __init__(self):
        self.out, self.value, self.count = bytearray(), 0, 0

    def put(self, value, length):
        for shift in range(length - 1, -1, -1):
            self.value = self.value << 1 | (value >> shift & 1)
            self.count += 1
            if self.count == 8:
                self.out.append(self.value)
                if self.value == 0xFF:
                    self.out.append(0)
                self.value, self.count = 0, 0

    def bytes(self):
        if self.count:
            self.put((1 << (8 - self.count)) - 1, 8 - self.count)
        return bytes(self.out)


def scan_bomb(ac_scans=1000):
    blocks = (SIDE // 8) ** 2
    one_code = bytes([1] + [0] * 15)  # one code of length 1 ('0')
    jpeg = b"\xff\xd8"
    jpeg += segment(0xDB, b"\x00" + b"\x01" * 64)
    jpeg += segment(0xC2, struct.pack(">BHHB", 8, SIDE, SIDE, 1) + b"\x01\x11\x00")
    jpeg += segment(0xC4, b"\x00" + one_code + b"\x00")   # DC: symbol 0, a difference of 0
    jpeg += segment(0xC4, b"\x10" + one_code + b"\xe0")   # AC: symbol 0xE0, EOBRUN 2^14 + 14 bits
    dc = Bits()
    for _ in range(blocks):
        dc.put(0, 1)
    jpeg += segment(0xDA, b"\x01\x01\x00\x00\x00\x00") + dc.bytes()
    ac = Bits()
    left = blocks
    while left:
        run = min(left, 32767)
        if run < 16384:  # the last run: exactly what is left, in the smallest EOBRUN class
            raise SystemExit("blocks do not end on a long run")
        ac.put(0, 1)
        ac.put(run - 16384, 14)
        left -= run
    ac_scan = segment(0xDA, b"\x01\x01\x00\x01\x3f\x00") + ac.bytes()
    return jpeg + ac_scan * ac_scans + b"\xff\xd9"


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def deep_png():
    row = b"\x00" * (1 + SIDE * 8)
    packer = zlib.compressobj(9)
    compressed = b"".join(packer.compress(row) for _ in range(SIDE)) + packer.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", SIDE, SIDE, 16, 6, 0, 0, 0))
            + chunk(b"IDAT", compressed) + chunk(b"IEND", b""))


if __name__ == "__main__":
    for name, data in (("scan-bomb.jpg", scan_bomb()), ("deep.png", deep_png())):
        with open(os.path.join(FIXTURES, name), "wb") as handle:
            handle.write(data)
        print(name, len(data), "bytes")
