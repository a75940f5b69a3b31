"""Draws images/icon.png, the extension's 128x128 Marketplace icon (vsce wants a PNG), from
the shapes of icons/net.svg (the .net file icon: a small three-layer network), scaled 8x,
on a rounded dark square. Standard library only (no imaging library on the build machines):
4x4 supersampled coverage, written as an RGBA PNG with zlib.

    python3 scripts/icon.py
"""

import math
import pathlib
import struct
import zlib

SIZE, SS, SCALE = 128, 4, 8.0
INK = (0x7C, 0x6F, 0xD6)
BACKGROUND = (0x1F, 0x1F, 0x2E)
# From icons/net.svg (16x16 units): edges, then nodes (x, y, r).
EDGES = [((3, 4.5), (8, 3)), ((3, 4.5), (8, 8)), ((3, 11.5), (8, 8)), ((3, 11.5), (8, 13)), ((8, 3), (13, 8)), ((8, 8), (13, 8)), ((8, 13), (13, 8))]
NODES = [(3, 4.5, 1.8), (3, 11.5, 1.8), (8, 3, 1.6), (8, 8, 1.6), (8, 13, 1.6), (13, 8, 2.0)]
STROKE = 1.0


def segment_distance(px, py, a, b):
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def inside_rounded_square(x, y, radius=22.0):
    cx, cy = min(max(x, radius), SIZE - radius), min(max(y, radius), SIZE - radius)
    return math.hypot(x - cx, y - cy) <= radius


def pixel(x, y):
    ink = back = 0
    for sy in range(SS):
        for sx in range(SS):
            px, py = x + (sx + 0.5) / SS, y + (sy + 0.5) / SS
            if not inside_rounded_square(px, py):
                continue
            u, v = px / SCALE, py / SCALE  # in the SVG's 16x16 units
            on = any(math.hypot(u - nx, v - ny) <= r for nx, ny, r in NODES) or any(
                segment_distance(u, v, a, b) <= STROKE / 2 for a, b in EDGES
            )
            ink += on
            back += not on
    n = SS * SS
    alpha = (ink + back) / n
    if alpha == 0:
        return (0, 0, 0, 0)
    mix = ink / (ink + back)
    rgb = tuple(round(INK[i] * mix + BACKGROUND[i] * (1 - mix)) for i in range(3))
    return (*rgb, round(255 * alpha))


def png(width, height, rows):
    raw = b"".join(b"\0" + bytes(c for px in row for c in px) for row in rows)
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


out = pathlib.Path(__file__).resolve().parent.parent / "images" / "icon.png"
out.write_bytes(png(SIZE, SIZE, [[pixel(x, y) for x in range(SIZE)] for y in range(SIZE)]))
print(f"wrote {out}")
