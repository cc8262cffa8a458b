#!/usr/bin/env python3
"""Carry an ASCII PLY triangle mesh in fewer bytes, and get it back byte for byte.

The faces of a scanned mesh ("3 a b c " lines) compress poorly as text: each index is written as its
difference from the index before it (zigzag, then 7 bits a byte), which xz packs into about a quarter
less. The header and the vertex lines stay text.

  mesh_pack.py pack MESH.ply DIR      writes DIR/NAME.text (header and vertices) and DIR/NAME.faces,
                                      and checks that unpacking gives MESH.ply's bytes back
  mesh_pack.py unpack DIR/NAME OUT    writes OUT from DIR/NAME.text and DIR/NAME.faces
"""
import hashlib
import os
import re
import sys


def pack(data):
    """(text, faces) of a PLY whose faces are all 'list uchar int' triangles written as '3 a b c '."""
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii")
    nvertices = int(re.search(r"element vertex (\d+)", header).group(1))
    nfaces = int(re.search(r"element face (\d+)", header).group(1))
    lines = data[end:].split(b"\n")
    if lines[-1] != b"" or len(lines) != nvertices + nfaces + 1:
        raise ValueError("the body is not one line per vertex and per face")
    text = data[:end] + b"\n".join(lines[:nvertices]) + b"\n"
    faces = bytearray()
    previous = 0
    for line in lines[nvertices:-1]:
        fields = line.split(b" ")
        if len(fields) != 5 or fields[0] != b"3" or fields[4] != b"":
            raise ValueError("a face line is not '3 a b c ': %r" % line)
        for field in fields[1:4]:
            index = int(field)
            delta = index - previous
            previous = index
            value = (delta << 1) ^ (delta >> 63)
            while value >= 0x80:
                faces.append(value & 0x7F | 0x80)
                value >>= 7
            faces.append(value)
    return text, bytes(faces)


def unpack(text, faces):
    out = [text]
    indices = []
    previous = 0
    value = shift = 0
    for byte in faces:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte & 0x80:
            continue
        previous += (value >> 1) ^ -(value & 1)
        indices.append(previous)
        value = shift = 0
    for i in range(0, len(indices), 3):
        out.append(b"3 %d %d %d \n" % tuple(indices[i:i + 3]))
    return b"".join(out)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "pack":
        data = open(sys.argv[2], "rb").read()
        text, faces = pack(data)
        if hashlib.sha256(unpack(text, faces)).digest() != hashlib.sha256(data).digest():
            sys.exit("mesh_pack: unpacking does not give the file back")
        name = os.path.join(sys.argv[3], os.path.splitext(os.path.basename(sys.argv[2]))[0])
        open(name + ".text", "wb").write(text)
        open(name + ".faces", "wb").write(faces)
    elif len(sys.argv) == 4 and sys.argv[1] == "unpack":
        text = open(sys.argv[2] + ".text", "rb").read()
        faces = open(sys.argv[2] + ".faces", "rb").read()
        open(sys.argv[3], "wb").write(unpack(text, faces))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
