#!/usr/bin/env python3
"""Check tilesets written by gpu_mesh_tileset against 3D Tiles 1.1.

    test/tiles/check_tileset.py DIR/tileset.json...

Each tileset.json is validated against the 3D Tiles 1.1 JSON schema (the
specification's own schema files, test/tiles/schema/, from CesiumGS/3d-tiles
under CC BY 4.0), with Python's jsonschema (Draft 2020-12), and then for what
the schema cannot say (the rules of the specification's tile section):
  - every content uri names a file beside tileset.json, a GLB (glTF magic,
    version 2, its length as its header says), and every GLB of the directory
    is named once;
  - a tile's geometricError is at least each child's, the tileset's at least
    the root's, the leaves' 0; numbers finite;
  - box bounding volumes are boxes (12 numbers, half axes along x, y, z
    positive) and a child's box lies inside its parent's (spatial coherence,
    the condition of REPLACE refinement); the root has a 4 x 4 affine
    transform with a finite, non-singular linear part.
Prints a line per problem and one per tileset; exits 1 if any has a problem,
2 when jsonschema is missing (Debian: python3-jsonschema).
"""
import json
import math
import os
import struct
import sys
import warnings

try:
    import jsonschema
except ImportError:
    print("check_tileset: SKIPPED: Python's jsonschema is not installed (Debian: python3-jsonschema)")
    sys.exit(2)

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema")


def schema_uri(name):
    return "file://" + os.path.join(SCHEMA_DIR, name)


def load(uri):
    with open(uri[len("file://"):] if uri.startswith("file://") else uri) as fh:
        return json.load(fh)


def validator():
    """A Draft 2020-12 validator of tileset.schema.json whose references resolve as files of SCHEMA_DIR."""
    uri = schema_uri("tileset.schema.json")
    schema = dict(load(uri))
    # the file's own relative $id would make its references relative to nothing: give it its place
    schema["$id"] = uri
    try:
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012
    except ImportError:
        # jsonschema before 4.18 (Debian 12 has 4.10): RefResolver reads file: URIs itself
        resolver = jsonschema.RefResolver(uri, schema)
        return jsonschema.Draft202012Validator(schema, resolver=resolver)
    registry = Registry(retrieve=lambda u: DRAFT202012.create_resource(load(u)))
    return jsonschema.Draft202012Validator(schema, registry=registry)


def box_inside(child, parent, slack=1e-6):
    """Both boxes axis-aligned (as geoacc writes them): the child's extent within the parent's."""
    for axis in range(3):
        c, ch = child[axis], child[3 + axis * 4]
        p, ph = parent[axis], parent[3 + axis * 4]
        if c - ch < p - ph - slack * (1 + abs(p) + ph) or c + ch > p + ph + slack * (1 + abs(p) + ph):
            return False
    return True


def check(path):
    problems = []
    base = os.path.dirname(path)
    with open(path) as fh:
        doc = json.load(fh)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for e in sorted(validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
            problems.append("schema: %s at %s" % (e.message, "/".join(map(str, e.absolute_path)) or "/"))
    if not isinstance(doc.get("asset"), dict) or doc["asset"].get("version") != "1.1":
        problems.append("asset.version is not 1.1")

    named = set()

    def walk(tile, where, parent_error, parent_box):
        error = tile.get("geometricError")
        if not isinstance(error, (int, float)) or not math.isfinite(error) or error < 0:
            problems.append("%s: geometricError %r" % (where, error))
            error = 0
        if error > parent_error:
            problems.append("%s: geometricError %r above its parent's %r" % (where, error, parent_error))
        box = tile.get("boundingVolume", {}).get("box")
        if box is not None:
            if len(box) != 12 or not all(math.isfinite(x) for x in box):
                problems.append("%s: box %r" % (where, box))
            elif any(box[i] != 0 for i in (4, 5, 6, 8, 9, 10)) or min(box[3], box[7], box[11]) <= 0:
                problems.append("%s: the box's half axes are not positive along x, y, z" % where)
            elif parent_box is not None and not box_inside(box, parent_box):
                problems.append("%s: the box is not inside its parent's" % where)
        content = tile.get("content")
        if content is not None:
            uri = content.get("uri")
            if not isinstance(uri, str):
                problems.append("%s: content without a uri" % where)
                uri = ""
            if uri in named:
                problems.append("%s: %s named twice" % (where, uri))
            named.add(uri)
            file = os.path.join(base, uri)
            if not uri:
                pass
            elif not os.path.isfile(file):
                problems.append("%s: content %s is missing" % (where, uri))
            else:
                with open(file, "rb") as fh:
                    data = fh.read()
                magic, version, length = struct.unpack("<4sII", data[:12])
                if magic != b"glTF" or version != 2 or length != len(data):
                    problems.append("%s: %s is not a GLB 2.0 file of its length" % (where, uri))
        children = tile.get("children", [])
        if not isinstance(children, list):
            children = []
        if not children and error != 0:
            problems.append("%s: a leaf with geometricError %r" % (where, error))
        for i, child in enumerate(children):
            walk(child, "%s/children/%d" % (where, i), error, box)

    root = doc.get("root", {})
    transform = root.get("transform")
    if transform is not None:
        m = transform
        if len(m) != 16 or not all(math.isfinite(x) for x in m) or m[3] != 0 or m[7] != 0 or m[11] != 0 or m[15] != 1:
            problems.append("root: the transform is not a finite affine 4 x 4 matrix")
        else:
            det = (m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2])
                   + m[8] * (m[1] * m[6] - m[5] * m[2]))
            if abs(det) < 1e-12:
                problems.append("root: the transform is singular")
    walk(root, "root", doc.get("geometricError", math.inf), None)
    for dirpath, _, files in os.walk(base):
        for f in files:
            if f.endswith(".glb"):
                rel = os.path.relpath(os.path.join(dirpath, f), base)
                if rel not in named:
                    problems.append("%s is in no tile" % rel)
    return problems, len(named)


def main(paths):
    bad = 0
    for path in paths:
        problems, tiles = check(path)
        for p in problems:
            print("%s: %s" % (path, p))
        print("%s: %s (%d tiles with content)" % (path, "ok" if not problems else "%d problems" % len(problems), tiles))
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
