#!/usr/bin/env python3
"""Draw encounters over the density heatmap: docs/encounters_ny.png.

Reads the heatmap that scripts/demo.sh writes (an 8-bit palette PNG of the New York harbour tracks, extent
BOX(556000 4470000, 618000 4526000) in UTM 18N, 50 m pixels) and, on standard input, one encounter a line as
"x y" in UTM 18N metres (the README's query prints them); draws a ring around each and writes a palette PNG.
The standard library only (zlib): no imaging package is needed.

    psql -At -F ' ' -d geoacc_demo -c "SELECT ST_X(a_position), ST_Y(a_position) FROM gpu_encounters(...)" \\
        | scripts/encounters_picture.py /tmp/ais_density.png docs/encounters_ny.png
"""
import struct
import sys
import zlib

X0, Y1, CELL = 556000.0, 4526000.0, 50.0
RING = (255, 255, 255)
EDGE = (0, 0, 0)


def chunks(data):
    pos = 8
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def unfilter(raw, width, height):
    """The rows of an 8-bit, one byte per pixel image, PNG filters undone."""
    rows, prev, pos = [], bytearray(width), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + width])
        pos += 1 + width
        for i in range(width):
            a = line[i - 1] if i else 0
            b = prev[i]
            c = prev[i - 1] if i else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return rows


def chunk(kind, body):
    return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body) & 0xffffffff)


def main():
    source, target = sys.argv[1], sys.argv[2]
    data = open(source, 'rb').read()
    parts = list(chunks(data))
    header = dict(parts)[b'IHDR']
    width, height, depth, colour = struct.unpack('>IIBB', header[:10])
    if depth != 8 or colour != 3:
        sys.exit('%s: an 8-bit palette PNG is expected' % source)
    palette = bytearray(dict(parts)[b'PLTE'])
    if len(palette) // 3 <= 254:
        ring, edge = len(palette) // 3, len(palette) // 3 + 1
        palette += bytes(RING) + bytes(EDGE)
    else:
        # a full palette: its lightest and darkest colours
        sums = [sum(palette[3 * i:3 * i + 3]) for i in range(len(palette) // 3)]
        ring, edge = sums.index(max(sums)), sums.index(min(sums))
    rows = unfilter(zlib.decompress(b''.join(body for kind, body in parts if kind == b'IDAT')), width, height)

    for line in sys.stdin:
        if not line.strip():
            continue
        x, y = (float(v) for v in line.split()[:2])
        cx, cy = (x - X0) / CELL, (Y1 - y) / CELL
        for py in range(int(cy) - 12, int(cy) + 13):
            for px in range(int(cx) - 12, int(cx) + 13):
                if 0 <= px < width and 0 <= py < height:
                    r = ((px + 0.5 - cx) ** 2 + (py + 0.5 - cy) ** 2) ** 0.5
                    if 7.5 <= r <= 9.5:
                        rows[py][px] = ring
                    elif 6.5 <= r < 7.5 or 9.5 < r <= 10.5:
                        rows[py][px] = edge

    raw = b''.join(b'\0' + bytes(row) for row in rows)
    out = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'PLTE', bytes(palette))
    trns = dict(parts).get(b'tRNS')
    if trns is not None:
        trns = bytearray(trns) + b'\xff' * max(0, len(palette) // 3 - len(trns))
        trns[ring] = trns[edge] = 255
        out += chunk(b'tRNS', bytes(trns))
    out += chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
    open(target, 'wb').write(out)


if __name__ == '__main__':
    main()
