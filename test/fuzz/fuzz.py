#!/usr/bin/env python3
"""
Seeded fuzzing of geoacc's SQL functions against a running server.

For each function: valid random inputs checked against an independent
reference (PostGIS ST_Simplify for simplification, a numeric-precision
PL/pgSQL TWED (float32 within the README's bound), the scalar TWED for the
matrix, the serial density raster
for the same input in a different order), edge inputs, and hostile inputs
that must end in a result or a clean ERROR -- never an internal error
(SQLSTATE XX000) and never a server restart, which is checked after every
batch.  Every case is generated from the seed, so a failure printed with
its seed and case number replays with --seed S --only N.

    test/fuzz/fuzz.py [--seed S] [--cases N] [--functions a,b] [--only N]

The family `snapshot` (snapshots of random tracks against the functions over
the same rows) needs a server with the GPU service and runs only when named.

Connects with psql and the usual PG* environment variables.  Ends with
"fuzz: N passed, N failed"; exits non-zero on any failure.

With --single DATADIR each batch runs instead in a single-user backend of
that stopped cluster (postgres --single), started through --wrap (for
example compute-sanitizer): a backend that is a process of its own, which
a tool that follows new processes can follow.  The database must have been
set up first (a run with --cases 0 against the running server).
"""
import argparse
import datetime
import decimal
import math
import os
import random
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH = 200                     # cases per psql run; a crash loses at most one batch

# --------------------------------------------------------------- values


def num(x):
    """A float8 literal (NaN and infinities quoted)."""
    if math.isnan(x):
        return "'NaN'::float8"
    if math.isinf(x):
        return "'Infinity'::float8" if x > 0 else "'-Infinity'::float8"
    return repr(float(x))


def arr(xs):
    return "ARRAY[" + ", ".join(num(x) for x in xs) + "]::float8[]"


def exact(xs):
    """A numeric[] holding the float8 values exactly (the reference's input)."""
    return "ARRAY[" + ", ".join(str(decimal.Decimal(x)) for x in xs) + "]::numeric[]"


def exact2(rows):
    return "ARRAY[" + ", ".join("[" + ", ".join(str(decimal.Decimal(x)) for x in r) + "]" for r in rows) + \
        "]::numeric[]"


def arr2(rows):
    return "ARRAY[" + ", ".join("[" + ", ".join(num(x) for x in r) + "]" for r in rows) + "]::float8[]"


def magnitude(rng):
    """A scale for coordinates: ordinary, projected, geographic, tiny or huge."""
    return rng.choice([1, 1, 100, 1e5, 1e6, 1e-3, 1e-150, 1e150])


def trajectory(rng, npoints, with_z=False, srid=32618, scale=None):
    """A random-walk LINESTRING M (ZM) as SQL, M strictly increasing; at a random scale unless given."""
    scale = scale or magnitude(rng)
    x, y, z = rng.uniform(-5, 5) * scale, rng.uniform(-5, 5) * scale, rng.uniform(0, 50)
    t = rng.choice([0.0, 1.6e9]) + rng.uniform(0, 100)
    pts = []
    for _ in range(npoints):
        pts.append((x, y, z, t))
        step = scale * rng.choice([0, 0.001, 1, 1, 10])
        x += rng.uniform(-1, 1) * step
        y += rng.uniform(-1, 1) * step
        z += rng.uniform(-1, 1)
        t += rng.choice([0.5, 1, 60, 1e-3]) * rng.uniform(1, 2)
    if with_z:
        coords = ", ".join("ST_MakePoint(%s, %s, %s, %s)" % (num(p[0]), num(p[1]), num(p[2]), num(p[3])) for p in pts)
    else:
        coords = ", ".join("ST_MakePointM(%s, %s, %s)" % (num(p[0]), num(p[1]), num(p[3])) for p in pts)
    return "ST_SetSRID(ST_MakeLine(ARRAY[%s]), %d)" % (coords, srid)


def hostile_geometry(rng):
    """Geometries a trajectory function must refuse or skip cleanly."""
    return rng.choice([
        "NULL::geometry",
        "'LINESTRING M EMPTY'::geometry",
        "'POINT M (1 2 3)'::geometry",
        "'POLYGON ((0 0, 1 0, 1 1, 0 0))'::geometry",
        "'LINESTRING (0 0, 1 1)'::geometry",
        "'LINESTRING M (0 0 2, 1 1 1)'::geometry",
        "'LINESTRING M (0 0 1, 1 1 1)'::geometry",
        "'MULTILINESTRING M ((0 0 1, 1 1 2))'::geometry",
        "'GEOMETRYCOLLECTION EMPTY'::geometry",
        "ST_MakeLine(ST_MakePointM(0, 0, 1), ST_MakePointM('NaN', 0, 2))",
        "ST_MakeLine(ST_MakePointM(0, 0, 1), ST_MakePointM(1, 0, 'Infinity'))",
        "ST_MakeLine(ST_MakePointM(0, 0, 'NaN'), ST_MakePointM(1, 0, 2))",
        "ST_MakeLine(ST_MakePointM(1e308, -1e308, 1), ST_MakePointM(-1e308, 1e308, 2))",
        "ST_SetSRID('LINESTRING M (0 0 1, 1 1 2)'::geometry, 4326)",
        "'LINESTRING ZM (0 0 0 1, 1 1 1 2)'::geometry",
        "'TIN Z (((0 0 0, 1 0 0, 0 1 0, 0 0 0)))'::geometry",
        trajectory(rng, rng.randint(1, 3)),
    ])


def hostile_float(rng):
    return rng.choice(["NULL::float8", "'NaN'::float8", "'Infinity'::float8", "'-Infinity'::float8",
                       "-1::float8", "0::float8", "-0::float8", "1e-320::float8", "1e308::float8"])


def hostile_int(rng):
    return rng.choice(["NULL::int", "0", "-1", "1", "2", "3", "63", "64", "65535", "65536", "2147483647",
                       "(-2147483647 - 1)"])

# ---------------------------------------------------------------- cases
# Each generator returns SQL that ends in a boolean: true when the case passes.
# A hostile case is wrapped by fuzz_try(), which passes on a result or an
# ERROR other than XX000 (internal) and records the SQLSTATE.


def case_simplify(rng):
    if rng.random() < 0.35:
        geom = hostile_geometry(rng)
        tol = hostile_float(rng) if rng.random() < 0.5 else num(rng.choice([0, 1, 10]))
        sql = ("SELECT count(*) FROM (SELECT gpu_dp_simplify(g, %s, %s, %s) OVER () "
               "FROM (VALUES (%s), (%s)) v(g)) x" %
               (tol, rng.choice(["false", "true", "NULL"]), rng.choice(["false", "true"]), geom,
                trajectory(rng, rng.randint(2, 6))))
        return "fuzz_try(%s)" % quote(sql)
    def one(i):
        with_z = rng.random() < 0.3
        if rng.random() < 0.3:
            # a MULTILINESTRING, simplified line by line (lines of 1 to 20 vertices)
            return "(%d, ST_Collect(ARRAY[%s]))" % (i, ", ".join(
                trajectory(rng, rng.randint(1, 20), with_z=with_z) for _ in range(rng.randint(1, 4))))
        return "(%d, %s)" % (i, trajectory(rng, rng.randint(2, 60), with_z=with_z))
    rows = ", ".join(one(i) for i in range(rng.randint(1, 6)))
    tol = rng.choice([0.0, 1e-9, 0.5, 1, 10, 1e5, float("inf")]) * rng.choice([1, 1e-150, 1e150])
    preserve = rng.choice(["false", "true"])
    # the window function and the scalar form against ST_Simplify with the same positional arguments
    return ("(SELECT bool_and(ST_AsEWKB(s) IS NOT DISTINCT FROM ST_AsEWKB(p) "
            "AND ST_AsEWKB(geoacc_dp_simplify(g, %s, %s)) IS NOT DISTINCT FROM ST_AsEWKB(p)) "
            "FROM (SELECT g, gpu_dp_simplify(g, %s, %s) OVER () AS s, ST_Simplify(g, %s, %s) AS p "
            "FROM (VALUES %s) v(id, g)) x)" % (num(tol), preserve, num(tol), preserve, num(tol), preserve, rows))


def geography_track(rng, npoints, radius_degrees):
    """A random walk in longitude and latitude (M increasing) as a geography, anywhere on Earth, across the
    antimeridian and near the poles too, within about radius_degrees of its start."""
    lon, lat = rng.uniform(-180, 180), rng.choice([rng.uniform(-89.9, 89.9), rng.uniform(85, 89.9), 0.0])
    t = 1.6e9 + rng.uniform(0, 100)
    step = radius_degrees / max(1, npoints)
    pts = []
    for _ in range(npoints):
        pts.append("ST_MakePointM(%r, %r, %r)" % ((lon + 540) % 360 - 180, lat, t))
        lat = max(-89.99, min(89.99, lat + rng.uniform(-1, 1) * step))
        lon += rng.uniform(-1, 1) * step / max(0.05, math.cos(math.radians(lat)))
        t += rng.uniform(1, 120)
    return "ST_SetSRID(ST_MakeLine(ARRAY[%s]), 4326)::geography" % ", ".join(pts)


def case_simplify_geography(rng):
    if rng.random() < 0.3:
        geom = rng.choice([
            geography_track(rng, rng.randint(3, 30), rng.choice([4, 8, 20])),
            "'SRID=4326;LINESTRING M (0 0 1, 170 0 2, 0 0.1 3)'::geography",
            "'SRID=4326;LINESTRING (0 0, 1 1, 2 0)'::geography",
            "'SRID=4326;LINESTRING M (0 0 2, 1 1 1, 2 0 3)'::geography",
            "'SRID=4326;POINT M (0 0 1)'::geography", "NULL::geography",
            "'SRID=4326;MULTILINESTRING M ((0 0 1, 1 1 2, 2 0 3), EMPTY)'::geography",
            "'SRID=4326;LINESTRING ZM (0 0 0 1, 0.1 0 1e300 2, 0.2 0 0 3)'::geography",
        ])
        sql = "SELECT ST_AsText(geoacc_dp_simplify(%s, %s, use_z => %s))" % (
            geom, rng.choice([hostile_float(rng), "10", "1e300", "0"]), rng.choice(["false", "true"]))
        return "fuzz_try(%s)" % quote(sql)
    rows = ", ".join("(%d, %s)" % (i, geography_track(rng, rng.randint(2, 80), rng.choice([0.01, 0.3, 2.5])))
                     for i in range(rng.randint(1, 5)))
    tol = rng.choice([0.0, 1, 10, 100, 5000])
    sync = rng.choice(["false", "true"])
    # the window function equals the scalar form; the kept vertices are the original ones; with the
    # spatial distance every vertex lies within the tolerance of the result by PostGIS's geodesic distance
    # (0.3% relative: the projection's error within 2.5 degrees of a track's centre)
    within = ("NOT EXISTS (SELECT 1 FROM ST_DumpPoints(g::geometry) d "
              "WHERE ST_Distance(d.geom::geography, s) > %s * 1.003 + 1e-9)" % num(tol)) if sync == "false" else "true"
    return ("(SELECT bool_and(ST_AsEWKB(s::geometry) = ST_AsEWKB(geoacc_dp_simplify(g, %s, true, %s)::geometry) "
            "AND NOT EXISTS (SELECT 1 FROM ST_DumpPoints(s::geometry) k WHERE NOT EXISTS (SELECT 1 FROM "
            "ST_DumpPoints(g::geometry) o WHERE ST_AsEWKB(o.geom) = ST_AsEWKB(k.geom))) AND %s) "
            "FROM (SELECT g, gpu_dp_simplify(g, %s, true, %s) OVER () AS s FROM (VALUES %s) v(id, g)) x)"
            % (num(tol), sync, within, num(tol), sync, rows))


def series(rng, dims, extreme=True):
    """n x dims values and increasing times; extreme: magnitudes up to 1e+-100 (not for large degrees, whose
    powers would leave numeric's range in the reference)."""
    n = rng.randint(1, 9)
    scale = rng.choice([1, 1, 1e3, 1e-3] + ([1e100, 1e-100] if extreme else []))
    vals = [[rng.uniform(-10, 10) * scale for _ in range(dims)] for _ in range(n)]
    t0 = rng.choice([0, 1.6e9])
    ts, t = [], t0 + rng.uniform(0, 3)
    for _ in range(n):
        ts.append(t)
        t += rng.uniform(0.1, 3)
    return vals, ts


def case_twed(rng):
    if rng.random() < 0.35:
        a, ta = series(rng, 2)
        args = [rng.choice([arr2(a), "NULL::float8[]", "'{}'::float8[]", "'{{{1}}}'::float8[]",
                            "ARRAY[1, NULL]::float8[]", "ARRAY['NaN']::float8[]"]),
                rng.choice(["NULL::float8[]", arr(ta), arr(list(reversed(ta))), "ARRAY[1]::float8[]"]),
                arr2(series(rng, rng.choice([1, 2]))[0]), "NULL::float8[]",
                hostile_float(rng), hostile_float(rng), hostile_int(rng),
                rng.choice(["true", "false", "NULL"]), rng.choice(["true", "false"])]
        return "fuzz_try(%s)" % quote("SELECT gpu_twed(%s)" % ", ".join(args))
    dims = rng.choice([1, 2, 3])
    degree = rng.choice([1, 2, 2, 3, 4, rng.randint(5, 300)])
    a, ta = series(rng, dims, degree <= 2)
    b, tb = series(rng, dims, degree <= 2)
    root = rng.choice(["true", "false"]) if degree < 5 else "true"
    nu, lam = rng.choice([0, 0.001, 1, 10]), rng.choice([0, 0.5, 1, 100])
    call = "gpu_twed(%s, %s, %s, %s, %s, %s, %d, %s)" % (arr2(a), arr(ta), arr2(b), arr(tb), num(nu), num(lam),
                                                          degree, root)
    ref = "fuzz_twed_reference(%s, %s, %s, %s, %s, %s, %d, %s)" % (exact2(a), exact(ta), exact2(b), exact(tb),
                                                                    num(nu), num(lam), degree, root)
    # a relative error of 1e-12 (float64 with many roundings; exact for the reference)
    return "fuzz_close(%s, %s, 1e-12)" % (call, ref)


def far_series(rng, dims, n, like=None):
    """A random walk in UTM-sized coordinates with epoch times (steps of up to 400 km, starts up to 2,000 km
    apart), or with `like` a near-duplicate of that series: its points displaced by a little noise."""
    if like:
        vals, ts = like
        noise = 10 ** rng.uniform(-6, 4)
        idx = [min(len(ts) - 1, i * len(ts) // n) for i in range(n)]
        vals = [[x + rng.uniform(-noise, noise) for x in vals[j]] for j in idx]
        return vals, [ts[j] + rng.uniform(0, 1) + i for i, j in enumerate(idx)]
    step, dt = 10 ** rng.uniform(0, 5.6), 10 ** rng.uniform(0, 3.6)
    p = [(5e5 if d == 0 else 4.5e6 if d == 1 else 0) + rng.uniform(-2e6, 2e6) for d in range(dims)]
    t = 1.6e9 + rng.uniform(-1e7, 1e7)
    vals, ts = [], []
    for _ in range(n):
        vals.append(list(p))
        ts.append(t)
        p = [x + rng.uniform(-step, step) for x in p]
        t += rng.uniform(0.01, 1) * dt
    return vals, ts


def case_twed_float32(rng):
    """float32 against the numeric reference, within the README's bound 2^-22 (n + m) (d + q E), on series
    far from each other and from 0: E is the distance between the corners of the box around the pair plus
    nu times its time range, q = 1 with the root and the degree without it."""
    dims = rng.choice([1, 2, 3, 4])
    root = rng.random() < 0.8
    degree = rng.randint(1, 8) if root else rng.randint(1, 4)   # without the root, powers of 400 km leave float32
    a, ta = far_series(rng, dims, rng.randint(1, 12))
    b, tb = far_series(rng, dims, rng.randint(1, 12), (a, ta) if rng.random() < 0.4 else None)
    nu, lam = rng.choice([0, 1e-3, 0.1, 1]), rng.choice([0, 1, 100, 1e4])
    lo = [min(p[d] for p in a + b) for d in range(dims)]
    hi = [max(p[d] for p in a + b) for d in range(dims)]
    powered = sum((h - l) ** degree for l, h in zip(lo, hi))
    extent = (powered ** (1.0 / degree) if root else powered) + nu * (max(ta + tb) - min(ta + tb))
    q = 1 if root else degree
    call = "gpu_twed(%s, %s, %s, %s, %s, %s, %d, %s, true)" % (arr2(a), arr(ta), arr2(b), arr(tb), num(nu),
                                                                num(lam), degree, "true" if root else "false")
    ref = "fuzz_twed_reference(%s, %s, %s, %s, %s, %s, %d, %s)" % (exact2(a), exact(ta), exact2(b), exact(tb),
                                                                    num(nu), num(lam), degree,
                                                                    "true" if root else "false")
    return "fuzz_within(%s, %s, %r, %r)" % (call, ref, 2.0 ** -22 * (len(a) + len(b)), q * extent)


def case_twed_matrix(rng):
    if rng.random() < 0.5:
        sql = rng.choice([
            "", " ", ";", "SELECT 1", "SELECT 1, 2", "SELECT 1, ''{1}''::float8[]; SELECT 1",
            "SELECT NULL::int, ''{1}''::float8[]", "SELECT 1, NULL::float8[]", "SELECT ''x'', ''{1}''::float8[]",
            "SELECT 1::numeric, ''{1}''::float8[]", "SELECT 9223372036854775807, ''{1}''::float8[]",
            "SELECT i, ARRAY[i]::float8[] FROM generate_series(1, 3) i WHERE i > 5",
            "SELECT 1, ''LINESTRING M (0 0 1, 1 1 1)''::geometry",
            "SELECT 1, ''x''::fuzz_evil.geometry", "SELECT 1, 7::fuzz_evil.int_geometry",
            "SELECT 1, ''\\x00''::fuzz_evil.bytea_geometry", "SELECT 1::fuzz_evil.id, ''{1}''::float8[]",
            "SELECT 1, ''POINT (0 0)''::geometry", "VALUES (1, ''{1}''::float8[])",
            "SELECT 1, ''{1}''::float8[] FOR UPDATE", "COPY (SELECT 1) TO STDOUT", "SELECT pg_sleep(0)",
            "DROP TABLE fuzz_result", "SELECT * FROM no_such_table", "SELEC 1",
            "WITH d AS (DELETE FROM fuzz_result RETURNING 1, ''{1}''::float8[]) SELECT * FROM d",
        ])
        b = rng.choice(["NULL", "''", "'SELECT 2, ''{2}''::float8[]'", "'SELECT 2, ''{{2, 3}}''::float8[]'"])
        return "fuzz_try(%s)" % quote("SELECT count(*) FROM gpu_twed_matrix('%s', %s, %s, %s)" %
                                      (sql, b, hostile_float(rng), hostile_float(rng)))
    dims = rng.choice([1, 2])
    # a distance depends on its pair alone, in float32 too (each pair in the frame of one of its series)
    float32 = rng.choice(["false", "true"])
    far = rng.random() < 0.3
    rows = [far_series(rng, dims, rng.randint(1, 9)) if far else series(rng, dims, float32 == "false")
            for _ in range(rng.randint(1, 5))]
    values = " UNION ALL ".join("SELECT %d, %s, %s" % (i, arr2(v), arr(t)) for i, (v, t) in enumerate(rows))
    return ("(SELECT bool_and(m.distance = gpu_twed(x.v, x.t, y.v, y.t, 1, 1, float32 => %s)) IS NOT FALSE "
            "FROM gpu_twed_matrix(%s, NULL, 1, 1, float32 => %s) m JOIN (%s) x(id, v, t) ON x.id = m.a_id "
            "JOIN (%s) y(id, v, t) ON y.id = m.b_id)" % (float32, quote(values), float32, values, values))


def case_density(rng):
    if rng.random() < 0.5:
        args = [hostile_geometry(rng) if rng.random() < 0.5 else trajectory(rng, rng.randint(2, 20)),
                rng.choice(["ST_MakeBox2D(ST_Point(-10, -10), ST_Point(10, 10))", "NULL::box2d",
                            "ST_MakeBox2D(ST_Point(1, 1), ST_Point(1, 1))",
                            "ST_MakeBox2D(ST_Point('NaN', 0), ST_Point(1, 1))",
                            "ST_MakeBox2D(ST_Point(-1e308, -1e308), ST_Point(1e308, 1e308))"]),
                hostile_int(rng), hostile_int(rng),
                rng.choice(["'gaussian'", "'uniform'", "'nope'", "NULL", "''"]), hostile_int(rng),
                rng.choice(["true", "false", "NULL"])]
        sql = "SELECT length(gpu_density_raster(%s))" % ", ".join(args)
        return "fuzz_try(%s)" % quote(sql)
    rows = [trajectory(rng, rng.randint(2, 30)) for _ in range(rng.randint(1, 5))]
    # a margin that exists at every magnitude (a stationary track has an extent of zero size)
    extent = ("ST_Expand(ST_Extent(g), greatest(1, abs(ST_XMin(ST_Extent(g))), abs(ST_XMax(ST_Extent(g))), "
              "abs(ST_YMin(ST_Extent(g))), abs(ST_YMax(ST_Extent(g)))) * 1e-3)::box2d")
    size = (rng.randint(1, 40), rng.randint(1, 40))
    kernel = rng.choice(["uniform", "triangular", "epanechnikov", "quartic", "triweight", "tricube", "gaussian",
                         "cosine"])
    ks = rng.choice([1, 3, 5, 7])
    values = ", ".join("(%d, %s)" % (i, g) for i, g in enumerate(rows))
    # the count mode, or weights (the count and time modes) in fixed-point sums
    mode = rng.choice(["", ", true, 'count', i %% 3 + 0.25", ", true, 'time', i %% 3 + 0.25"])
    agg = "gpu_density_raster(g, (SELECT %s FROM (VALUES %s) e(i, g)), %d, %d, '%s', %d%s ORDER BY %%s)" % (
        extent, values, size[0], size[1], kernel, ks, mode)
    # the raster does not depend on the order of the rows (integer counts and sums)
    return ("(SELECT %s = %s FROM (VALUES %s) v(i, g))" % (agg % "i", agg % "i DESC", values))


def case_density_state(rng):
    rows = [trajectory(rng, rng.randint(2, 30)) for _ in range(rng.randint(2, 8))]
    values = ", ".join("(%d, %s)" % (i, g) for i, g in enumerate(rows))
    extent = ("ST_Expand(ST_Extent(g), greatest(1, abs(ST_XMin(ST_Extent(g))), abs(ST_XMax(ST_Extent(g))), "
              "abs(ST_YMin(ST_Extent(g))), abs(ST_YMax(ST_Extent(g)))) * 1e-3)::box2d")
    args = "g, (SELECT %s FROM (VALUES %s) e(i, g)), %d, %d, 'gaussian', %d" % (
        extent, values, rng.randint(1, 40), rng.randint(1, 40), rng.choice([1, 3, 7]))
    if rng.random() < 0.5:
        # a state with bytes changed, read back through its text form: a state or a clean ERROR
        changes = ", ".join("(%d, %d)" % (rng.randint(0, 120), rng.randint(0, 255)) for _ in range(rng.randint(1, 4)))
        sql = ("SELECT fuzz_density_merge(encode(fuzz_set_bytes(fuzz_state_send(s), ARRAY[%s]), 'base64')"
               "::geoacc_density_state) FROM (SELECT fuzz_density_partial(%s) AS s FROM (VALUES %s) v(i, g)) p" %
               (changes.replace("(", "ARRAY[").replace(")", "]"), args, values))
        return "fuzz_try(%s)" % quote(sql)
    # partial states of the rows split in two, through their text form, added up: the whole raster
    split = rng.randint(0, len(rows))
    return ("(SELECT fuzz_density_merge(s::text::geoacc_density_state) = "
            "(SELECT gpu_density_raster(%s) FROM (VALUES %s) v(i, g)) "
            "FROM (SELECT i < %d AS half, fuzz_density_partial(%s) AS s FROM (VALUES %s) v(i, g) GROUP BY 1) p)" %
            (args, values, split, args, values))


def case_twed_pairs(rng):
    if rng.random() < 0.3:
        sql = ("SELECT count(d) FROM (SELECT gpu_twed_pairs(a, b, %s, %s, %s) OVER () AS d "
               "FROM (VALUES (%s, %s), (%s, %s)) v(a, b)) s" %
               (hostile_float(rng), hostile_float(rng), hostile_int(rng), hostile_geometry(rng),
                trajectory(rng, 3), trajectory(rng, 4), hostile_geometry(rng)))
        return "fuzz_try(%s)" % quote(sql)
    # each row's distance is gpu_twed of its pair, whatever else the partition holds; float32 takes
    # trajectories of one scale (its range is checked over a whole batch, as in gpu_twed_matrix)
    float32 = rng.choice(["true", "false"])
    scale = rng.choice([1, 100, 1e5, 1e6]) if float32 == "true" else None
    tracks = [trajectory(rng, rng.randint(1, 25), scale=scale) for _ in range(rng.randint(1, 6))]
    pairs = [(rng.randrange(len(tracks)), rng.randrange(len(tracks))) for _ in range(rng.randint(1, 12))]
    values = ", ".join("(%s, %s)" % (tracks[i], tracks[j]) for i, j in pairs)
    params = "%s, %s, %d, %s, %s" % (num(rng.choice([0, 0.001, 1])), num(rng.choice([0, 1, 100])),
                                     rng.choice([1, 2, 3]), rng.choice(["true", "false"]), float32)
    return ("(SELECT bool_and(d = gpu_twed(a, b, %s)) FROM (SELECT a, b, gpu_twed_pairs(a, b, %s) OVER () AS d "
            "FROM (VALUES %s) v(a, b)) s)" % (params, params, values))


def case_png(rng):
    base = ("gpu_density_raster(ST_MakeLine(ST_MakePointM(0, 0, 1), ST_MakePointM(5, 3, 2)), "
            "ST_MakeBox2D(ST_Point(-1, -1), ST_Point(6, 4)), %d, %d)" % (rng.randint(1, 30), rng.randint(1, 30)))
    raster = base
    for _ in range(rng.randint(0, 4)):
        pos = rng.randint(0, 90)
        raster = "set_byte(%s, least(%d, length(%s) - 1), %d)" % (raster, pos, base, rng.randint(0, 255))
    if rng.random() < 0.2:
        raster = "substring(%s FROM 1 FOR %d)" % (base, rng.randint(0, 80))
    sql = "SELECT length(geoacc_raster_png(%s, %s, %s))" % (
        raster, rng.choice(["'viridis'", "'gray'", "'nope'", "NULL", "E'0% 0 0 255\\n100% 255 0 0 128'",
                            "E'nv 1 2 3\\n-1e308 0 0 0\\n1e308 9 9 9'", "'0 0 0'", "'7% 1 2'", "E'#\\n\\n'",
                            "'1e999 0 0 0'"]),
        rng.choice(["'log'", "'linear'", "'x'"]))
    return "fuzz_try(%s)" % quote(sql)


def case_compression(rng):
    a = hostile_geometry(rng) if rng.random() < 0.5 else trajectory(rng, rng.randint(1, 30))
    b = hostile_geometry(rng) if rng.random() < 0.5 else trajectory(rng, rng.randint(1, 10))
    return "fuzz_try(%s)" % quote("SELECT * FROM geoacc_compression_stats(%s, %s)" % (a, b))


def case_segment_join(rng):
    if rng.random() < 0.4:
        a = rng.choice([
            "SELECT 1::bigint, %s" % hostile_geometry(rng),
            "SELECT i, %s FROM generate_series(1, 3) i" % trajectory(rng, rng.randint(2, 5)),
            "SELECT NULL::bigint, %s" % trajectory(rng, 3), "SELECT 1, 2", "", "SELECT 1, ''x''::fuzz_evil.geometry",
            "SELECT 1, %s UNION ALL SELECT 2, ST_SetSRID(%s, 3857)" % (trajectory(rng, 3), trajectory(rng, 3, srid=0)),
        ])
        sql = "SELECT count(*) FROM gpu_segment_join(%s, %s, %s, %s)" % (
            quote(a), rng.choice(["NULL", quote("SELECT 5, %s" % trajectory(rng, 4))]), hostile_float(rng),
            rng.choice(["'auto'", "'spatial'", "'temporal'", "'spatiotemporal'", "'nope'", "NULL"]))
        return "fuzz_try(%s)" % quote(sql)
    # a few vessels moving near each other over the same hour
    with_z = rng.random() < 0.25
    rows = []
    for i in range(rng.randint(2, 5)):
        n = rng.randint(2, 8)
        x, y, z, t = rng.uniform(0, 500), rng.uniform(0, 500), rng.uniform(0, 20), 1.6e9 + rng.uniform(0, 600)
        pts = []
        for _ in range(n):
            pts.append((x, y, z, t))
            step = rng.choice([0, 10, 50, 200])
            x, y, z = x + rng.uniform(-1, 1) * step, y + rng.uniform(-1, 1) * step, z + rng.uniform(-1, 1)
            t += rng.uniform(1, 300)
        if with_z:
            g = "ST_MakeLine(ARRAY[%s])" % ", ".join("ST_MakePoint(%r, %r, %r, %r)" % p for p in pts)
        else:
            g = "ST_MakeLine(ARRAY[%s])" % ", ".join("ST_MakePointM(%r, %r, %r)" % (p[0], p[1], p[3]) for p in pts)
        rows.append("(%d::bigint, ST_SetSRID(%s, 32618))" % (i + 1, g))
    values = "VALUES " + ", ".join(rows)
    d = rng.choice([1.0, 10.0, 50.0, 150.0, 400.0])
    method = rng.choice(["auto", "spatial", "temporal", "spatiotemporal"])
    use_z = "true" if with_z and rng.random() < 0.5 else "false"
    # brute force: every pair of 2-point segments of different vessels, by PostGIS's CPA functions
    return ("fuzz_segment_join_agrees(%s, %r, %s, %s)" % (quote(values), d, quote(method), use_z))


def tin(rng, ntriangles, scale, origin):
    """A TIN Z of random triangles (some degenerate, some sharing corners) as SQL."""
    corners = []
    pts = [(origin[0] + rng.uniform(0, 1) * scale, origin[1] + rng.uniform(0, 1) * scale, rng.uniform(0, 1) * scale)
           for _ in range(max(3, ntriangles))]
    for _ in range(ntriangles):
        a, b, c = (rng.choice(pts) for _ in range(3))
        corners.append("((%r %r %r,%r %r %r,%r %r %r,%r %r %r))" % (a + b + c + a))
    return "ST_SetSRID('TIN Z (%s)'::geometry, 32633)" % ",".join(corners)


def case_mesh_clip(rng):
    scale = rng.choice([1.0, 100.0, 1e-3])
    origin = rng.choice([(0.0, 0.0), (500000.0, 4000000.0)])
    mesh = tin(rng, rng.randint(1, 40), scale, origin)
    if rng.random() < 0.35:
        box = rng.choice([
            "'BOX3D(0 0 0, 1 1 1)'::box3d", "'BOX3D(1 1 1, 0 0 0)'::box3d", "NULL::box3d",
            "ST_3DMakeBox(ST_MakePoint('NaN', 0, 0), ST_MakePoint(1, 1, 1))",
            "ST_3DMakeBox(ST_MakePoint(0, 0, 0), ST_MakePoint('Infinity', 1, 1))"])
        target = rng.choice([mesh, "'POLYGON Z ((0 0 0, 1 0 0, 1 1 0, 0 0 0))'::geometry", "'TIN EMPTY'::geometry",
                             "'POLYHEDRALSURFACE Z (((0 0 0, 1 0 0, 1 1 0, 0 1 0, 0 0 0)))'::geometry",
                             "'TIN ZM (((0 0 0 1, 1 0 0 1, 0 1 0 1, 0 0 0 1)))'::geometry", "NULL::geometry",
                             "ST_SetSRID(ST_MakePoint(1, 2, 3), 32633)",
                             "set_byte(geoacc_mesh_to_ply(%s), %d, %d)" % (mesh, rng.randint(0, 300), rng.randint(0, 255)),
                             "substring(geoacc_mesh_to_ply(%s) FROM 1 FOR %d)" % (mesh, rng.randint(0, 400)),
                             "'ply\\nformat ascii 1.0\\nelement vertex 1\\nend_header\\n'::bytea"])
        sql = rng.choice([
            "SELECT gpu_mesh_clip(%s, %s)" % (target, box),
            "SELECT count(*) FROM gpu_mesh_clip(%s, ARRAY[%s, NULL])" % (target, box),
            "SELECT geoacc_mesh_from_ply(%s)" % target if "ply" in target else "SELECT geoacc_mesh_to_ply(%s)" % target,
            "SELECT length(geoacc_mesh_to_glb(%s))" % target,
            # in the select-list form, a row per call (the FROM form would store every tile of a huge grid first)
            "SELECT count(*) FROM (SELECT geoacc_tile_grid(%s, %s, %s, %s) LIMIT 1000) g" % (
                box, hostile_int(rng), hostile_int(rng), hostile_int(rng)),
        ])
        return "fuzz_try(%s)" % quote(sql)
    # the tiles of a grid over the mesh's extent add up to its area (PostGIS's ST_Area of the TINs); one box
    # alone equals the multi-box form and the PLY form
    n = (rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 2))
    return ("fuzz_mesh_clip_agrees(%s, %d, %d, %d, %r)" % (quote(mesh), n[0], n[1], n[2], rng.uniform(0.1, 0.9)))


def case_mesh_tileset(rng):
    """gpu_mesh_tileset: hostile arguments (meshes as for the clip, levels and cells at and past their limits,
    SRIDs in degrees, unknown or out of range, broken PLY) end in a result or a clean ERROR; valid random TINs
    give a tileset whose tileset.json parses, names every GLB row once, has geometric errors falling to 0 at
    the leaves, and equals, byte for byte, the tileset of the same mesh as PLY (fuzz_mesh_tileset_agrees)."""
    scale = rng.choice([1.0, 100.0, 1e-3])
    origin = rng.choice([(0.0, 0.0), (500000.0, 4000000.0)])
    mesh = tin(rng, rng.randint(1, 40), scale, origin)
    if rng.random() < 0.35:
        target = rng.choice([mesh, "'POLYGON Z ((0 0 0, 1 0 0, 1 1 0, 0 0 0))'::geometry", "'TIN EMPTY'::geometry",
                             "'TIN ZM (((0 0 0 1, 1 0 0 1, 0 1 0 1, 0 0 0 1)))'::geometry", "NULL::geometry",
                             "ST_SetSRID(%s, %d)" % (mesh, rng.choice([4326, 0, 3857, 4978, 2154])),
                             "ST_SetSRID(%s, 123456)" % mesh])
        levels = rng.choice([rng.randint(1, 4), hostile_int(rng), 0, 11, -1])
        cells = rng.choice([rng.randint(1, 16), hostile_int(rng), 0, 1025])
        if rng.random() < 0.4:
            ply = rng.choice(["geoacc_mesh_to_ply(%s)" % mesh,
                              "set_byte(geoacc_mesh_to_ply(%s), %d, %d)" % (mesh, rng.randint(0, 300), rng.randint(0, 255)),
                              "substring(geoacc_mesh_to_ply(%s) FROM 1 FOR %d)" % (mesh, rng.randint(0, 400)),
                              "'ply\\nformat ascii 1.0\\nelement vertex 1\\nend_header\\n'::bytea"])
            srid = rng.choice([0, 32633, 4326, -1, 1000000, 123456, hostile_int(rng)])
            sql = "SELECT count(*) FROM gpu_mesh_tileset(%s, %s, %s, %s)" % (ply, levels, srid, cells)
        else:
            sql = "SELECT count(*) FROM gpu_mesh_tileset(%s, %s, %s)" % (target, levels, cells)
        return "fuzz_try(%s)" % quote(sql)
    return "fuzz_mesh_tileset_agrees(%s, %d, %d)" % (quote(mesh), rng.randint(1, 4), rng.randint(1, 16))


def fixes(rng):
    """Random fixes (id, t, geom) as a VALUES query, in shuffled order: a few vessels at times in seconds (whole
    or not) with repeats at the same time (the same or another position), gaps, stops and jumps.  Not beyond
    1e30: the SQL form's ST_Distance is NULL from FLT_MAX on."""
    scale = rng.choice([1, 1, 100, 1e5, 1e6, 1e-3, 1e-150, 1e30])
    whole = rng.random() < 0.5
    srid = rng.choice([32618, 0])
    rows = []
    for _ in range(rng.randint(1, 6)):
        oid = rng.choice([rng.randint(-3, 3), rng.randint(-2 ** 63, 2 ** 63 - 1)])
        x, y, t = rng.uniform(-5, 5) * scale, rng.uniform(-5, 5) * scale, rng.choice([0.0, 1.6e9])
        for _ in range(rng.randint(0, 30)):
            kind = rng.random()
            if kind < 0.15 and rows:
                pass                                    # the same time again
            elif kind < 0.25:
                t += rng.choice([600, 3600, 86400])     # a gap
            else:
                t += rng.randint(1, 60) if whole else rng.uniform(0.001, 60)
            if rng.random() < 0.8:
                step = scale * rng.choice([0.001, 1, 1, 10, 1000])
                x += rng.uniform(-1, 1) * step
                y += rng.uniform(-1, 1) * step
            if x == 0:                                  # -0 and +0 tie in SQL's ORDER BY but not here
                x = 0.0
            if y == 0:
                y = 0.0
            rows.append("(%d::bigint, %s::float8, ST_SetSRID(ST_MakePoint(%s, %s), %d))" % (oid, num(t), num(x), num(y),
                                                                                          srid))
    rng.shuffle(rows)
    if not rows:
        return "SELECT 1::bigint, 1::float8, 'POINT(0 0)'::geometry WHERE false", whole
    return "VALUES " + ", ".join(rows), whole


def case_make_trajectories(rng):
    if rng.random() < 0.35:
        sql = rng.choice([
            "", ";", "SELECT 1", "SELECT 1, 2, 3", "SELECT 1, 1.0, ''POINT(0 0)''::geometry; SELECT 1",
            "SELECT NULL::int, 1.0, ''POINT(0 0)''::geometry", "SELECT 1, NULL::float8, NULL::geometry",
            "SELECT ''x'', 1.0, ''POINT(0 0)''::geometry", "SELECT 1, ''x'', ''POINT(0 0)''::geometry",
            "SELECT 1, now(), ''x''::fuzz_evil.geometry", "SELECT 1, 1, 7::fuzz_evil.int_geometry",
            "SELECT 1::fuzz_evil.id, 1.0, ''POINT(0 0)''::geometry",
            "SELECT 1, 1.0, ''POINT EMPTY''::geometry", "SELECT 1, ''infinity''::timestamptz, ''POINT(0 0)''::geometry",
            "SELECT 1, ''-infinity''::timestamp, ''POINT(0 0)''::geometry",
            "SELECT 1, ''NaN''::float8, ''POINT(0 0)''::geometry", "SELECT 1, 1e308::numeric * 10, ''POINT(0 0)''::geometry",
            "SELECT 1, 1.0::float4, ''POINT(1e308 1e308)''::geometry UNION ALL SELECT 1, 2, ''POINT(-1e308 -1e308)''",
            "SELECT i, i::float8, ST_MakePoint(i, ''NaN'') FROM generate_series(1, 3) i",
            "SELECT 1, 1.0, ''SRID=4326;POINT(0 0)''::geometry UNION ALL SELECT 1, 2, ''POINT(1 1)''",
            "SELECT 9223372036854775807, 1.0, ''POINT(0 0)''::geometry UNION ALL SELECT -9223372036854775807 - 1, 1, ''POINT(0 0)''",
            "SELECT 1, 1.0, %s" % hostile_geometry(rng).replace("'", "''"),
            "SELECT 1, 1.0, ''POINT(0 0)''::geometry FOR UPDATE", "DROP TABLE fuzz_result", "SELEC 1",
            "WITH d AS (DELETE FROM fuzz_result RETURNING 1, 1.0, ''POINT(0 0)''::geometry) SELECT * FROM d",
        ])
        gap = rng.choice(["NULL", "'-1 second'", "'0'", "'1 month'", "'178000000 years'", "'1 second'"])
        call = "SELECT count(*) FROM gpu_make_trajectories('%s', %s::interval, %s, %s, %s, %s)" % (
            sql, gap, hostile_float(rng), rng.choice(["true", "false", "NULL"]), rng.choice(["true", "false", "NULL"]),
            hostile_float(rng))
        return "fuzz_try(%s)" % quote(call)
    values, whole = fixes(rng)
    gap = rng.choice(["NULL", "'0'", "'1 second'", "'59.5 seconds'", "'10 minutes'", "'2 hours'"])
    tolerance = rng.choice(["NULL", "0", "1", "10", "'Infinity'"])
    if tolerance != "NULL":
        tolerance = "%s::float8 * %s" % (tolerance, num(rng.choice([1, 1e-150, 1e150, 0.001, 1000])))
    speed = rng.choice(["NULL", "0", "1", "30", "1e6"])
    return "fuzz_make_trajectories_agrees(%s, %s, %s::interval, %s, %s, %s, %s)" % (
        quote(values), "true" if whole and rng.random() < 0.5 else "false", gap, tolerance,
        rng.choice(["true", "false"]), rng.choice(["true", "false"]) if tolerance != "NULL" else "false", speed)


# ------------------------------------------------------------ PLY counts

PLY_BASE = {"int8": "char", "uint8": "uchar", "int16": "short", "uint16": "ushort", "int32": "int", "uint32": "uint",
            "float32": "float", "float64": "double"}
PLY_STRUCT = {"char": "b", "uchar": "B", "short": "h", "ushort": "H", "int": "i", "uint": "I", "float": "f",
              "double": "d"}
PLY_INTEGER = ["char", "uchar", "short", "ushort", "int", "uint"]
# list counts past the bytes of a small file in each count type (signed types read negative too), and header
# counts far past them
PLY_HUGE_COUNT = {"char": [-1, -128, 127], "uchar": [255], "short": [-1, -32768, 32767], "ushort": [65535, 0x8000],
                  "int": [0x30000000, 0x7fffffff, -1, -2 ** 31, -0x30000000, 0x10000],
                  "uint": [0x30000000, 0x7fffffff, 0xffffffff, 0x80000000, 0x10000]}
PLY_HUGE_ELEMENTS = [0x30000000, 0x7fffffff, 0x80000000, 0xffffffff, 2 ** 32, 2 ** 29 - 1, 2 ** 29, 2 ** 53,
                     2 ** 63 - 1, 2 ** 64 - 1, 0x10000, 1000000]


def ply_size(t):
    return struct.calcsize(PLY_STRUCT[PLY_BASE.get(t, t)])


def ply_word(t, v):
    """A value as an ASCII PLY word (integers exactly, floats shortest)."""
    return str(v) if PLY_BASE.get(t, t) in PLY_INTEGER or not isinstance(v, float) else repr(v)


def ply_encode(fmt, elements, mark=None):
    """A PLY file (bytes) of elements [{name, count (declared: an int or a word), props, rows}]: a prop is
    (type, name) or ("list", count type, item type, name); a row a value per prop, a list's value (count written,
    items).  mark: (element, row, prop) of a list whose count's end offset in the data is returned too."""
    head = ["ply", "format %s 1.0" % fmt, "comment fuzz"]
    for e in elements:
        head.append("element %s %s" % (e["name"], e["count"]))
        head.extend("property " + " ".join(p) for p in e["props"])
    head.append("end_header")
    header = ("\n".join(head) + "\n").encode()
    order = "<" if fmt == "binary_little_endian" else ">"
    out = bytearray()
    mark_end = None
    for ei, e in enumerate(elements):
        for ri, row in enumerate(e["rows"]):
            words = []
            for pi, (p, v) in enumerate(zip(e["props"], row)):
                if p[0] == "list":
                    count, items = v
                    if fmt == "ascii":
                        words.append(ply_word(p[1], count))
                        if (ei, ri, pi) == mark:
                            mark_end = len(out) + len(" ".join(words))
                        words.extend(ply_word(p[2], x) for x in items)
                    else:
                        out += struct.pack(order + PLY_STRUCT[PLY_BASE.get(p[1], p[1])], count)
                        if (ei, ri, pi) == mark:
                            mark_end = len(out)
                        out += b"".join(struct.pack(order + PLY_STRUCT[PLY_BASE.get(p[2], p[2])], x) for x in items)
                elif fmt == "ascii":
                    words.append(ply_word(p[0], v))
                else:
                    out += struct.pack(order + PLY_STRUCT[PLY_BASE.get(p[0], p[0])], v)
            if fmt == "ascii":
                out += (" ".join(words) + "\n").encode()
    return header + bytes(out), len(header), mark_end


def ply_counts_blob(rng):
    """A PLY file of a few vertices and faces (ASCII or binary, either byte order) with a count that its bytes
    cannot hold: an element count of the header or a list count of the data, huge (up to 2^64 - 1), negative in a
    signed count type, not a number, or a little past the data at the end; or its data cut short.  Every file
    made here is malformed: its reader must refuse it.  Returns (bytes, what was done)."""
    fmt = rng.choice(["ascii", "binary_little_endian", "binary_big_endian"])
    ftype = rng.choice(["float", "double", "float32", "float64"])
    nv = rng.randint(3, 12)
    vprops = [(ftype, "x"), (ftype, "y"), (ftype, "z")]
    if rng.random() < 0.3:
        vprops += [("float", "nx"), ("float", "ny"), ("float", "nz")]
    if rng.random() < 0.3:
        vprops += [("uchar", "red"), ("uchar", "green"), ("uchar", "blue")]
    if rng.random() < 0.2:
        vprops.insert(rng.randint(0, len(vprops)), (rng.choice(PLY_INTEGER), "flags"))
    if rng.random() < 0.15:
        vprops.insert(rng.randint(0, len(vprops)), ("list", rng.choice(PLY_INTEGER), rng.choice(PLY_INTEGER), "tags"))
    ctype = rng.choice(PLY_INTEGER + ["uint8", "int32", "uint32"])
    itype = rng.choice(["int", "uint", "uchar", "ushort", "short", "int32", "uint32"])
    fprops = [("list", ctype, itype, rng.choice(["vertex_indices", "vertex_index"]))]
    if rng.random() < 0.2:
        fprops.insert(rng.randint(0, 1), (rng.choice(PLY_INTEGER), "material"))

    def value(p):
        if p[0] == "list":
            items = [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
            return (len(items), items)
        if p[1] in ("red", "green", "blue"):
            return rng.randint(0, 255)
        if PLY_BASE.get(p[0], p[0]) in PLY_INTEGER:
            return rng.randint(0, 100)
        return float(rng.randint(-1000, 1000)) / 8

    vrows = [[value(p) for p in vprops] for _ in range(nv)]
    nf = rng.randint(1, 10)
    frows = []
    for _ in range(nf):
        k = rng.randint(3, min(5, nv))
        idx = rng.sample(range(min(nv, 255 if PLY_BASE.get(itype, itype) in ("uchar",) else 127)), k)
        frows.append([(k, idx) if p[0] == "list" else rng.randint(0, 100) for p in fprops])
    elements = [{"name": "vertex", "count": nv, "props": vprops, "rows": vrows},
                {"name": "face", "count": nf, "props": fprops, "rows": frows}]
    if rng.random() < 0.25:
        # an element geoacc passes over, before, between or after
        eprops = rng.choice([[("int", "vertex1"), ("int", "vertex2")],
                             [("list", rng.choice(PLY_INTEGER), rng.choice(PLY_INTEGER), "ids")],
                             []])
        n = rng.randint(0 if eprops else 0, 4)
        erows = [[value(p) for p in eprops] for _ in range(n)] if eprops else []
        elements.insert(rng.randint(0, 2), {"name": rng.choice(["edge", "material", "extra"]), "count": n,
                                            "props": eprops, "rows": erows})

    def data_len():
        blob, hlen, _ = ply_encode(fmt, elements)
        return len(blob) - hlen

    def min_instance(e):
        return sum((2 if fmt == "ascii" else ply_size(p[1] if p[0] == "list" else p[0])) for p in e["props"])

    with_data = [e for e in elements if e["props"]]
    kind = rng.choice(["element_huge", "element_huge", "element_word", "list_count", "list_count", "list_count",
                       "last_more", "cut"])
    if kind == "list_count":
        lists = [(ei, ri, pi) for ei, e in enumerate(elements) for ri in range(len(e["rows"]))
                 for pi, p in enumerate(e["props"]) if p[0] == "list"]
        ei, ri, pi = rng.choice(lists)
        p = elements[ei]["props"][pi]
        base = PLY_BASE.get(p[1], p[1])
        items = elements[ei]["rows"][ri][pi][1]
        words = None
        if fmt == "ascii" and rng.random() < 0.3:
            # a word its count type cannot hold, or that is no integer
            words = rng.choice(["-1", "4294967296", "99999999999999999999", "1e9", "0x30000000", "805306368.5",
                                str(PLY_HUGE_COUNT["uint"][0])])
        for count in ([words] if words else rng.sample(PLY_HUGE_COUNT[base], len(PLY_HUGE_COUNT[base]))):
            elements[ei]["rows"][ri][pi] = (count, items)
            blob, hlen, end = ply_encode(fmt, elements, (ei, ri, pi))
            left = len(blob) - hlen - end
            if isinstance(count, str) or count < 0 or \
                    (count + 2 > left if fmt == "ascii" else count * ply_size(p[2]) > left):
                return blob, "list %s count %s in %s %d, %d bytes left" % (p[3], count, elements[ei]["name"], ri + 1,
                                                                           left)
        kind = "element_huge"                  # no count of this type is past the bytes: another malformation
    if kind == "element_huge":
        e = rng.choice(with_data)
        for n in rng.sample(PLY_HUGE_ELEMENTS, len(PLY_HUGE_ELEMENTS)):
            if n * min_instance(e) > data_len() + 1:
                e["count"] = n
                break
        blob = ply_encode(fmt, elements)[0]
        return blob, "element %s count %s" % (e["name"], e["count"])
    if kind == "element_word":
        e = rng.choice(elements)
        e["count"] = rng.choice(["-1", "-0", "-2147483648", "-805306368", "18446744073709551616",
                                 "99999999999999999999999", "0x30000000", "1e9", "4294967295x", "3.0", "''"])
        return ply_encode(fmt, elements)[0], "element %s count %s" % (e["name"], e["count"])
    if kind == "last_more":
        # the last element with data declared a little (or much) longer than it is
        e = with_data[-1]
        e["count"] = len(e["rows"]) + rng.choice([1, 2, 3, 1000, 0x30000000, 0xffffffff])
        return ply_encode(fmt, elements)[0], "last element %s count %s of %d" % (e["name"], e["count"],
                                                                                len(e["rows"]))
    # cut: the data ends early (in ASCII before a whole word, so that what is left is no shorter valid word)
    blob, hlen, _ = ply_encode(fmt, elements)
    if fmt == "ascii":
        body = blob[hlen:].rstrip()
        starts = [i for i in range(len(body)) if body[i:i + 1] not in (b" ", b"\n") and
                  (i == 0 or body[i - 1:i] in (b" ", b"\n"))]
        cut = rng.choice(starts[-3:]) if starts else 0
        return blob[:hlen + cut], "data cut to %d of %d characters" % (cut, len(blob) - hlen)
    cut = rng.randint(0, len(blob) - hlen - 1)
    return blob[:hlen + cut], "data cut to %d of %d bytes" % (cut, len(blob) - hlen)


def bytea(b):
    return "'\\x%s'::bytea" % b.hex()


BRIEF_PLY = ("convert_to(E'ply\\nformat binary_little_endian 1.0\\nelement vertex 3\\nproperty float x\\n"
             "property float y\\nproperty float z\\nelement face 1\\nproperty list int int vertex_indices\\n"
             "end_header\\n', 'UTF8') || decode(repeat('00', 36) || '00000030' || '000000000100000002000000', 'hex')")


def case_ply_counts(rng):
    """A malformed PLY file (ply_counts_blob) read by each reader: a clean ERROR naming PLY (class 22 or 54), and
    the backend's peak resident memory (VmHWM, reset first) at most 64 MB higher."""
    if rng.random() < 0.03:
        blob, what = BRIEF_PLY, "list int count 0x30000000 (little-endian) in face 1"
    else:
        b, what = ply_counts_blob(rng)
        blob = bytea(b)
    box = rng.choice(["'BOX3D(-1000 -1000 -1000, 1000 1000 1000)'::box3d", "'BOX3D(0 0 0, 1 1 1)'::box3d"])
    sql = rng.choice([
        "SELECT geoacc_mesh_from_ply(%s, %d)" % (blob, rng.choice([0, 32633])),
        "SELECT gpu_mesh_clip(%s, %s)" % (blob, box),
        "SELECT count(*) FROM gpu_mesh_clip(%s, ARRAY[%s, %s])" % (blob, box, box),
        "SELECT geoacc_mesh_to_glb(%s)" % blob,
    ])
    return "fuzz_refused_small(%s, %s, 65536)" % (quote(sql), quote(what))


# ------------------------------------------------ trajectories in microseconds

EXACT_US = 2 ** 33 * 10 ** 6                    # |microseconds from 1970| whose M in seconds tells every us apart: 1697 to 2242
UNIX_EPOCH = datetime.datetime(1970, 1, 1)


def timestamp_text(us):
    """Microseconds from 1970 as a timestamp literal in UTC (years 1697 to 2242)."""
    return (UNIX_EPOCH + datetime.timedelta(microseconds=us)).strftime("%Y-%m-%d %H:%M:%S.%f+00")


def interval_text(rng, us):
    """An interval of us microseconds (a month counts 30 days, a day 24 hours) written one of several ways."""
    form = rng.random()
    if form < 0.3:
        whole, frac = divmod(us, 10 ** 6)
        return "%d.%06d seconds" % (whole, frac) if frac else "%d seconds" % whole
    if form < 0.45:
        return "%d microseconds" % us
    months, rest = divmod(us, 30 * 86400 * 10 ** 6) if rng.random() < 0.3 else (0, us)
    days, rest = divmod(rest, 86400 * 10 ** 6)
    hours, rest = divmod(rest, 3600 * 10 ** 6)
    minutes, rest = divmod(rest, 60 * 10 ** 6)
    seconds, micro = divmod(rest, 10 ** 6)
    return "%d mons %d days %02d:%02d:%02d.%06d" % (months, days, hours, minutes, seconds, micro)


def case_make_trajectories_us(rng):
    """gpu_make_trajectories of fixes with timestamptz or timestamp times (read as UTC): gaps of exactly max_gap,
    one microsecond more or less, repeats and the rest, with max_gap of whole microseconds ('59.999999 seconds',
    '10 minutes', months, days), against the SQL pipeline comparing intervals (t - lag(t) > max_gap); times at the
    ends of the 1697-2242 range kept, a time past them the clean error "fixes_sql row N has a time out of range"."""
    ttype = rng.choice(["timestamptz", "timestamp"])
    if rng.random() < 0.2:
        # one time out of range among good ones: the error names its row (the order of the VALUES list)
        n = rng.randint(1, 6)
        bad = rng.randint(1, n)
        rows = []
        for i in range(1, n + 1):
            if i == bad:
                t = "'%s'" % rng.choice([timestamp_text(-EXACT_US - 1), timestamp_text(EXACT_US + 1),
                                         timestamp_text(-EXACT_US - rng.randint(2, 10 ** 12)),
                                         timestamp_text(EXACT_US + rng.randint(2, 10 ** 12)),
                                         "1697-01-01 00:00:00+00", "2242-12-31 23:59:59.999999+00",
                                         "1000-06-01 12:00+00", "4713-11-24 00:00:00+00 BC",
                                         "294276-12-31 23:59:59.999999+00", "0001-01-01 00:00:00+00 BC",
                                         "3000-01-01 00:00+00"])
            else:
                t = "'%s'" % timestamp_text(rng.choice([-EXACT_US, EXACT_US, 0, rng.randint(-EXACT_US, EXACT_US)]))
            rows.append("(%d, %s::%s, 'POINT(%d %d)'::geometry)" % (rng.randint(1, 3), t, ttype, i, i))
        sql = "SELECT * FROM gpu_make_trajectories(%s, %s)" % (
            quote("SELECT * FROM (VALUES %s) f(id, t, geom)" % ", ".join(rows)),
            rng.choice(["NULL", "'1 hour'", "'0'"]))
        return "fuzz_error_is(%s, '22008', %s)" % (quote(sql), quote("fixes_sql row %d has a time out of range" % bad))
    gap = rng.choice([59999999, 600 * 10 ** 6, 10 ** 6, 1, 0, 86400 * 10 ** 6, 30 * 86400 * 10 ** 6,
                      3600 * 10 ** 6 + 500000, 86400 * 10 ** 6 + 1, rng.randint(1, 10 ** 10)])
    span = 50 * (gap + 2) + 10 ** 7
    r = rng.random()
    if r < 0.04:
        base = -EXACT_US                                # the first microsecond taken
    elif r < 0.08:
        base = EXACT_US - span                          # up to the last one
    elif r < 0.2:
        base = rng.randint(-EXACT_US, EXACT_US - span)
    else:
        base = rng.choice([0, 946684800 * 10 ** 6, 16 * 10 ** 14, -1, 1])
    rows = []
    srid = rng.choice([32618, 0])
    for oid in rng.sample(range(-3, 10), rng.randint(1, 4)):
        t = base + rng.randint(0, 10 ** 6)
        x, y = rng.uniform(-1000, 1000), rng.uniform(-1000, 1000)
        for _ in range(rng.randint(1, 25)):
            rows.append("(%d, '%s', ST_SetSRID(ST_MakePoint(%r, %r), %d))" % (oid, timestamp_text(t), x, y, srid))
            step = rng.choice([gap, gap, gap - 1, gap + 1, gap + 1, 0, rng.randint(0, gap + 1), 2 * gap + 1, 1])
            t = min(t + max(0, step), EXACT_US)
            x += rng.choice([0, 1, 100]) * rng.uniform(-1, 1)
            y += rng.choice([0, 1, 100]) * rng.uniform(-1, 1)
            x, y = x + 0.0, y + 0.0
            if x == 0:
                x = 0.0
            if y == 0:
                y = 0.0
    rng.shuffle(rows)
    fixes = "VALUES " + ", ".join(rows)
    tolerance = rng.choice(["NULL", "NULL", "0", "1", "10"])
    speed = rng.choice(["NULL", "NULL", "NULL", "0.001", "1", "30", "1e6"])
    synchronized = rng.choice(["true", "false"]) if tolerance != "NULL" else "false"
    return "fuzz_make_trajectories_ts_agrees(%s, %s, %s::interval, %s, %s, %s, %s)" % (
        quote(fixes), quote(ttype), quote(interval_text(rng, gap)), tolerance, rng.choice(["true", "false"]),
        synchronized, speed)


# ------------------------------------------------------- meshes on integer grids


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def case_mesh_clip_grid(rng):
    """A terrain-like TIN on an integer grid (spacing a power of two, at 0 or UTM magnitudes): cells cut by
    either diagonal, holes, flat stretches, walls standing on grid lines, triangles with two corners at one
    position; tiled by geoacc_tile_grid over its extent in counts that put the tile planes on grid lines (z
    planes on the integer heights), so that vertices and edges lie on them.  No triangle of any tile has two
    corners at one position, the tiles add up to the mesh's area, and one box (at a fraction of the extent that
    often falls on a grid line) agrees across the forms (fuzz_mesh_clip_agrees)."""
    w, h = rng.randint(1, 6), rng.randint(1, 6)
    s = rng.choice([1.0, 1.0, 0.5, 0.25, 2.0, 8.0])
    ox, oy = rng.choice([(0, 0), (0, 0), (500000, 4000000), (-3, 7), (-1000, -1000)])
    heights = rng.choice(["flat", "int", "int", "steps", "float"])
    z = {}
    for i in range(w + 1):
        for j in range(h + 1):
            z[i, j] = {"flat": 0.0, "int": float(rng.randint(0, 4)), "steps": float(min(i, j) // 2),
                       "float": rng.uniform(0, 4)}[heights]

    def corner(i, j):
        return (ox + i * s, oy + j * s, z[i, j])

    tris = []
    for i in range(w):
        for j in range(h):
            if rng.random() < 0.1 and w * h > 1:
                continue                                # a hole
            a, b, c, d = corner(i, j), corner(i + 1, j), corner(i + 1, j + 1), corner(i, j + 1)
            pair = [(a, b, c), (a, c, d)] if rng.random() < 0.5 else [(a, b, d), (b, c, d)]
            for t in pair:
                tris.append(t if rng.random() < 0.8 else (t[0], t[2], t[1]))
            r = rng.random()
            if r < 0.05:
                tris.append((a, a, c))                  # two corners at one position
            elif r < 0.08:
                tris.append((a, b, a))
            elif r < 0.12:
                top = (a[0], a[1], a[2] + rng.choice([1.0, 2.0]))
                tris.append((a, d, top))                # a wall standing on the grid line x = a's
            elif r < 0.14:
                tris.append((a, b, corner(min(i + 2, w), j)))   # flat along a grid line (collinear corners)
    if not tris:
        a = corner(0, 0)
        tris = [(a, corner(1, 0), corner(1, 1))]
    rng.shuffle(tris)
    mesh = "ST_SetSRID('TIN Z (%s)'::geometry, 32633)" % ",".join(
        "((%r %r %r,%r %r %r,%r %r %r,%r %r %r))" % (a + b + c + a) for a, b, c in tris)
    xs = sorted({p[0] for t in tris for p in t})
    ys = sorted({p[1] for t in tris for p in t})
    zs = sorted({p[2] for t in tris for p in t})
    nx = rng.choice(divisors(int(round((xs[-1] - xs[0]) / s))) + [rng.randint(1, 4)])
    ny = rng.choice(divisors(int(round((ys[-1] - ys[0]) / s))) + [rng.randint(1, 4)])
    nz = 1
    if heights != "flat" and rng.random() < 0.5:
        nz = rng.choice(divisors(max(1, int(zs[-1] - zs[0]))) + [rng.randint(1, 3)])
        # a triangle lying flat on an inner z plane belongs to the tiles on both sides (the boxes are closed):
        # z tiles only where none does
        planes = {zs[0] + (zs[-1] - zs[0]) * k / nz for k in range(1, nz)}
        if any(t[0][2] == t[1][2] == t[2][2] and t[0][2] in planes for t in tris):
            nz = 1
    f = rng.choice([0.5, 0.25, 0.75, 1.0 / 3, 1.0, rng.uniform(0.1, 0.9)])
    return "fuzz_mesh_clip_agrees(%s, %d, %d, %d, %r)" % (quote(mesh), nx, ny, nz, f)


# --------------------------------------------------------- huge coordinates


def case_mesh_clip_scaled(rng):
    """A TIN a few units around 0 (corners on a grid of 1/8 or anywhere), a box in it, and k in 900..1019:
    clipped after multiplying every coordinate and bound by 2^k, exactly 2^k times the unscaled clip
    (fuzz_mesh_clip_scaled), for one box, the tiles of geoacc_tile_grid and the PLY form."""
    snap = rng.random() < 0.5

    def coord():
        v = rng.uniform(-2, 2)
        return round(v * 8) / 8 if snap else v

    pts = [(coord(), coord(), coord()) for _ in range(rng.randint(3, 12))]
    tris = []
    for _ in range(rng.randint(1, 20)):
        a, b, c = (rng.choice(pts) for _ in range(3))
        tris.append("((%r %r %r,%r %r %r,%r %r %r,%r %r %r))" % (a + b + c + a))
    mesh = "ST_SetSRID('TIN Z (%s)'::geometry, %d)" % (",".join(tris), rng.choice([0, 32633]))
    lo, hi = [], []
    for _ in range(3):
        u, v = sorted((coord(), coord()))
        if rng.random() < 0.5:
            u, v = min(u, -abs(v)), max(v, abs(u))      # around 0, where most triangles pass
        if rng.random() < 0.1:
            v = u                                       # a box of no thickness
        if rng.random() < 0.15:
            u, v = -2.0, 2.0
        lo.append(u)
        hi.append(v)
    box = "ST_3DMakeBox(ST_MakePoint(%r, %r, %r), ST_MakePoint(%r, %r, %r))" % tuple(lo + hi)
    k = rng.randint(900, 1019)
    return "fuzz_mesh_clip_scaled(%s, %s, %r, %d, %d, %d)" % (quote(mesh), box, 2.0 ** k, rng.randint(1, 4),
                                                              rng.randint(1, 4), rng.randint(1, 3))


def vessel_geoms(rng, with_z, n=None, area=500):
    """A few vessels moving near each other (starting within `area` units) over the same hour: LINESTRING M
    (or ZM) geometries as SQL."""
    geoms = []
    for _ in range(n or rng.randint(2, 5)):
        x, y, z, t = rng.uniform(0, area), rng.uniform(0, area), rng.uniform(0, 20), 1.6e9 + rng.uniform(0, 600)
        pts = []
        for _ in range(rng.randint(2, 8)):
            pts.append((x, y, z, t))
            step = rng.choice([0, 10, 50, 200])
            x, y, z = x + rng.uniform(-1, 1) * step, y + rng.uniform(-1, 1) * step, z + rng.uniform(-1, 1)
            t += rng.uniform(1, 300)
        if with_z:
            g = "ST_MakeLine(ARRAY[%s])" % ", ".join("ST_MakePoint(%r, %r, %r, %r)" % p for p in pts)
        else:
            g = "ST_MakeLine(ARRAY[%s])" % ", ".join("ST_MakePointM(%r, %r, %r)" % (p[0], p[1], p[3]) for p in pts)
        geoms.append("ST_SetSRID(%s, 32618)" % g)
    return geoms


def vessels(rng, with_z, n=None, area=500):
    """vessel_geoms as a VALUES list of (id, trajectory), ids from 1."""
    return "VALUES " + ", ".join("(%d::bigint, %s)" % (i + 1, g)
                                 for i, g in enumerate(vessel_geoms(rng, with_z, n, area)))


def case_segment_join_scaled(rng):
    """The same vessels with x, y (and z) and the distance multiplied by 2^k1 and 2^k2 (k in 260..1000): the same
    rows, times to the bit, cpa_distance scaled exactly; at scale 1 the same within a small tolerance
    (fuzz_segment_join_scaled)."""
    with_z = rng.random() < 0.3
    k1, k2 = rng.sample(range(260, 1001), 2)
    return "fuzz_segment_join_scaled(%s, %r, %r, %r, %s, %s)" % (
        quote(vessels(rng, with_z, area=rng.choice([100, 500]))), rng.choice([1.0, 10.0, 50.0, 150.0, 400.0]),
        2.0 ** k1, 2.0 ** k2,
        quote(rng.choice(["auto", "spatial", "temporal", "spatiotemporal"])),
        "true" if with_z and rng.random() < 0.5 else "false")


def case_events(rng):
    """The vessel events: a third each gpu_encounters against the segment join merged by gaps-and-islands in SQL,
    gpu_stops against the rule run plainly, gpu_zone_visits against PostGIS's ST_Intersection per segment; or,
    one case in four, hostile arguments that must end in a result or a clean ERROR."""
    tracks = lambda: quote(vessels(rng, False, area=rng.choice([100, 500])))
    if rng.random() < 0.25:
        good = "SELECT * FROM (%s) t(id, traj)" % vessels(rng, False)
        bad = rng.choice([
            good, "SELECT 1::bigint, %s" % hostile_geometry(rng), "SELECT 1, 2", "", "SELECT NULL::bigint, NULL::geometry",
            "SELECT 1, ''x''::fuzz_evil.geometry", "SELECT 1, %s" % trajectory(rng, rng.randint(2, 5), srid=4326),
            "SELECT i, %s FROM generate_series(1, 3) i" % trajectory(rng, rng.randint(2, 5)),
        ])
        zones = rng.choice([
            "SELECT 1, ST_MakeEnvelope(0, 0, 100, 100, 32618) AS polygon", "SELECT 1, %s" % hostile_geometry(rng),
            "SELECT 1, ST_Boundary(ST_MakeEnvelope(0, 0, 1, 1, 32618))", "SELECT NULL::bigint, NULL::geometry",
            "SELECT 1, ST_MakeEnvelope(0, 0, 1, 1, 3857)", "SELECT 1, 'POLYGON EMPTY'::geometry",
            "SELECT 1, ST_SetSRID('MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), EMPTY)'::geometry, 32618)",
        ])
        interval = rng.choice(["'0'", "'1 hour'", "'-1 second'", "NULL", "'1000000 years'", "'1 mon'"])
        sql = rng.choice([
            "SELECT count(*) FROM gpu_encounters(%s, %s, %s, %s, %s, %s, %s)" % (
                quote(bad), rng.choice(["NULL", quote(good)]), hostile_float(rng), interval,
                rng.choice(["'0'", "'10 minutes'", "'-1 day'", "NULL"]), rng.choice(["NULL", hostile_float(rng)]),
                rng.choice(["'auto'", "'SPATIAL'", "'nope'", "NULL"])),
            "SELECT count(*) FROM gpu_stops(%s, %s, %s)" % (quote(bad), hostile_float(rng), interval),
            "SELECT count(*) FROM gpu_zone_visits(%s, %s)" % (quote(bad), quote(zones)),
        ])
        return "fuzz_try(%s)" % quote(sql)
    kind = rng.randrange(3)
    if kind == 0:
        return "fuzz_encounters_agree(%s, %r, %r, %s)" % (
            tracks(), rng.choice([1.0, 10.0, 50.0, 150.0, 400.0]), rng.choice([0.0, 1.0, 30.0, 300.0]),
            quote(rng.choice(JOIN_METHODS)))
    if kind == 1:
        return "fuzz_stops_agree(%s, %r, %r)" % (tracks(), rng.choice([0.0, 5.0, 20.0, 100.0, 1000.0]),
                                                 rng.choice([0.0, 10.0, 120.0, 600.0]))
    zones = []
    for i in range(rng.randint(1, 4)):
        cx, cy, r = rng.uniform(0, 500), rng.uniform(0, 500), rng.uniform(20, 300)
        shape = rng.random()
        if shape < 0.4:
            g = "ST_Buffer(ST_MakePoint(%r, %r), %r, %d)" % (cx, cy, r, rng.randint(1, 8))
        elif shape < 0.7:
            g = "ST_MakeEnvelope(%r, %r, %r, %r)" % (cx - r, cy - r, cx + r, cy + r)
        elif shape < 0.85:
            g = "ST_Difference(ST_Buffer(ST_MakePoint(%r, %r), %r, 4), ST_Buffer(ST_MakePoint(%r, %r), %r, 4))" % (
                cx, cy, r, cx, cy, r / 3)
        else:
            g = "ST_Multi(ST_Union(ST_MakeEnvelope(%r, %r, %r, %r), ST_MakeEnvelope(%r, %r, %r, %r)))" % (
                cx - r, cy - r, cx, cy, cx + r / 2, cy + r / 2, cx + r, cy + r)
        zones.append("(%d::bigint, ST_SetSRID(%s, 32618))" % (i + 1, g))
    return "fuzz_visits_agree(%s, %s)" % (tracks(), quote("VALUES " + ", ".join(zones)))


# ------------------------------------------------------------ hostile arguments

JOIN_METHODS = ["spatial", "temporal", "spatiotemporal", "auto"]


def any_case(rng, word):
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in word)


def box3d_text(rng, lo=-1.0, hi=3.0):
    a = [rng.uniform(lo, hi) for _ in range(3)]
    b = [rng.uniform(lo, hi) for _ in range(3)]
    return "BOX3D(%r %r %r,%r %r %r)" % tuple([min(u, v) for u, v in zip(a, b)] + [max(u, v) for u, v in zip(a, b)])


def case_hostile(rng):
    """Arguments at the edges of what the functions take: join methods in any case (the same rows as in lower
    case) and names that are none (the unknown-method ERROR); box arrays with any lower bound (box_index the
    subscripts, each row the one-box clip); a box whose SRID is not the mesh's (the ERROR naming both, but for
    SRID 0 on either side); self-joins with an id twice (the ERROR, unless one of the two is NULL; otherwise the
    rows of the join of the tracks with themselves where a_id < b_id); geoacc_tile_grid of huge counts under a
    statement_timeout of 1 s (the first rows in the select-list form with LIMIT, the grid's planes; the whole
    grid cancelled), counts past 2^63 - 1 and below 1.  Returns a case, or (case, SET statement) for the timed
    ones."""
    kind = rng.choice(["method", "method", "lower_bound", "lower_bound", "srid", "srid", "self_join", "self_join",
                       "tile_grid", "tile_grid"])
    if kind == "method":
        tracks = vessels(rng, False, rng.randint(2, 4))
        d = rng.choice([10.0, 100.0, 400.0])
        arrays = "(SELECT array_agg(id ORDER BY id) FROM (%s) t(id, g)), (SELECT array_agg(g ORDER BY id) FROM " \
                 "(%s) t(id, g)), NULL, NULL" % (tracks, tracks)
        form = rng.choice(["join", "array", "contacts"])
        if form == "join":
            call = "SELECT * FROM gpu_segment_join(%s, NULL, %r, %%s)" % (quote(tracks), d)
        elif form == "array":
            call = "SELECT * FROM gpu_segment_join(%s, %r, %%s)" % (arrays, d)
        else:
            call = "SELECT * FROM gpu_segment_contacts(%s, NULL, %r, %%s)" % (quote(tracks), d)
        if rng.random() < 0.6:
            name = rng.choice(JOIN_METHODS)
            return "fuzz_same_rows(%s, %s)" % (quote(call % quote(any_case(rng, name))), quote(call % quote(name)))
        name = rng.choice(["nope", "spatial ", " auto", "spatıal", "AUTO\t", "", "spatio-temporal", "SPATIALX",
                           "autö", "ＡＵＴＯ", "spatial\\0", "temporal;", "space", "Spatio Temporal", "au",
                           any_case(rng, rng.choice(JOIN_METHODS))[:-1]])
        return "fuzz_error_like(%s, '22023', %s)" % (
            quote(call % quote(name)), quote("unknown segment join method \".*\""))
    if kind == "lower_bound":
        mesh = tin(rng, rng.randint(1, 12), 2.0, (0.0, 0.0))
        n = rng.randint(1, 4)
        lower = rng.choice([-5, 0, 1, 2, 5, 1000, -2147483648, 2147483646 - n, rng.randint(-100, 100)])
        boxes = [box3d_text(rng) for _ in range(n)]
        literal = "'[%d:%d]={%s}'::box3d[]" % (lower, lower + n - 1, ",".join('"%s"' % b for b in boxes))
        r = rng.random()
        if r < 0.1:
            # NULL among them, or two dimensions: refused
            bad = rng.randint(0, n - 1)
            literal = "'[%d:%d]={%s}'::box3d[]" % (lower, lower + n - 1, ",".join(
                "NULL" if i == bad else '"%s"' % b for i, b in enumerate(boxes)))
            return "fuzz_error_is(%s, '22004', 'boxes must not contain NULLs')" % quote(
                "SELECT count(*) FROM gpu_mesh_clip(%s, %s)" % (mesh, literal))
        if r < 0.15:
            literal = "'[%d:%d][1:1]={%s}'::box3d[]" % (lower, lower + n - 1, ",".join('{"%s"}' % b for b in boxes))
            return "fuzz_error_is(%s, '22023', 'boxes must be a one-dimensional array')" % quote(
                "SELECT count(*) FROM gpu_mesh_clip(%s, %s)" % (mesh, literal))
        form = rng.choice(["geometry", "text", "ply"])
        if form == "geometry":
            rows, one = "gpu_mesh_clip(%s, %s)" % (mesh, literal), "ST_AsEWKB(gpu_mesh_clip(%s, a[s]))" % mesh
            got = "ST_AsEWKB(c.mesh)"
        elif form == "text":
            rows = "gpu_mesh_clip(ST_AsEWKT(%s), %s)" % (mesh, literal)
            one, got = "ST_AsEWKB(gpu_mesh_clip(ST_AsEWKT(%s), a[s]))" % mesh, "ST_AsEWKB(c.mesh)"
        else:
            rows = "gpu_mesh_clip(geoacc_mesh_to_ply(%s), %s)" % (mesh, literal)
            one, got = "gpu_mesh_clip(geoacc_mesh_to_ply(%s), a[s])" % mesh, "c.ply"
        # every subscript of the array a row whose box_index is that subscript and whose mesh is that box's clip
        return ("(SELECT count(*) = %d AND bool_and(s IS NOT NULL AND c.box_index IS NOT NULL AND %s = %s) "
                "FROM (SELECT %s AS a) x CROSS JOIN LATERAL generate_subscripts(x.a, 1) s "
                "FULL JOIN %s c ON c.box_index = s)" % (n, got, one, literal, rows))
    if kind == "srid":
        mesh_srid, box_srid = rng.choice([0, 32633, 4326]), rng.choice([0, 32633, 4326, 3857])
        mesh = "ST_SetSRID(%s, %d)" % (tin(rng, rng.randint(1, 8), 2.0, (0.0, 0.0)), mesh_srid)
        b = box3d_text(rng)
        with_srid = "Box3D(ST_SetSRID(%s::box3d::geometry, %d))" % (quote(b), box_srid)
        if box_srid and rng.random() < 0.2:
            with_srid = "Box3D(%s::geometry)" % quote("SRID=%d;LINESTRING Z (%s)" % (box_srid,
                                                                                  b[6:-1].replace(",", ", ")))
        plain = "%s::box3d" % quote(b)
        form = rng.choice(["one", "array", "text", "ply", "tile"])
        if form == "one":
            sql, same = "SELECT gpu_mesh_clip(%s, %s)" % (mesh, with_srid), "SELECT gpu_mesh_clip(%s, %s)" % (mesh, plain)
            message = "box has SRID %d, the mesh SRID %d" % (box_srid, mesh_srid)
        elif form == "array":
            at = rng.randint(1, 3)
            boxes = [plain] * 3
            boxes[at - 1] = with_srid
            sql = "SELECT box_index, ST_AsEWKB(mesh) FROM gpu_mesh_clip(%s, ARRAY[%s])" % (mesh, ", ".join(boxes))
            same = "SELECT box_index, ST_AsEWKB(mesh) FROM gpu_mesh_clip(%s, ARRAY[%s])" % (mesh, ", ".join([plain] * 3))
            message = "box %d has SRID %d, the mesh SRID %d" % (at, box_srid, mesh_srid)
        elif form == "text":
            sql = "SELECT gpu_mesh_clip(ST_AsEWKT(%s), %s)" % (mesh, with_srid)
            same = "SELECT gpu_mesh_clip(ST_AsEWKT(%s), %s)" % (mesh, plain)
            message = "box has SRID %d, the mesh SRID %d" % (box_srid, mesh_srid)
        elif form == "tile":
            # tiles of a box with an SRID carry it
            sql = ("SELECT ix, iy, ST_AsEWKB(gpu_mesh_clip(%s, box)) FROM geoacc_tile_grid(%s, 2, 2)" %
                   (mesh, with_srid))
            same = ("SELECT ix, iy, ST_AsEWKB(gpu_mesh_clip(%s, box)) FROM geoacc_tile_grid(%s, 2, 2)" %
                    (mesh, plain))
            message = "box has SRID %d, the mesh SRID %d" % (box_srid, mesh_srid)
        else:
            # a PLY file has no SRID: any box goes
            sql = "SELECT gpu_mesh_clip(geoacc_mesh_to_ply(%s), %s)" % (mesh, with_srid)
            same = "SELECT gpu_mesh_clip(geoacc_mesh_to_ply(%s), %s)" % (mesh, plain)
            mesh_srid = 0
        if mesh_srid and box_srid and mesh_srid != box_srid:
            return "fuzz_error_is(%s, '22023', %s)" % (quote(sql), quote(message))
        return "fuzz_same_rows(%s, %s)" % (quote(sql), quote(same))
    if kind == "self_join":
        geoms = vessel_geoms(rng, False, rng.randint(2, 5))
        n = len(geoms)
        ids = list(range(1, n + 1))
        if rng.random() < 0.7:
            ids[rng.randrange(n)] = ids[rng.randrange(n)]   # perhaps an id twice
        nulls = [rng.random() < 0.15 for _ in range(n)]
        table = "(VALUES %s) t(n, id, g)" % ", ".join(
            "(%d, %d::bigint, %s)" % (k, i, "NULL::geometry" if z else g)
            for k, (i, z, g) in enumerate(zip(ids, nulls, geoms)))
        values = "SELECT id, g FROM %s ORDER BY n" % table
        live = [i for i, z in zip(ids, nulls) if not z]
        d = rng.choice([10.0, 100.0, 400.0])
        if rng.random() < 0.5:
            sql = "SELECT * FROM gpu_segment_join(%s, NULL, %r)" % (quote(values), d)
            pair = "SELECT * FROM gpu_segment_join(%s, %s, %r) WHERE a_id < b_id" % (quote(values), quote(values), d)
        else:
            arrays = "(SELECT array_agg(id ORDER BY n) FROM %s), (SELECT array_agg(g ORDER BY n) FROM %s)" % (table,
                                                                                                           table)
            sql = "SELECT * FROM gpu_segment_join(%s, NULL, NULL, %r)" % (arrays, d)
            pair = "SELECT * FROM gpu_segment_join(%s, %s, %r) WHERE a_id < b_id" % (arrays, arrays, d)
        if len(set(live)) < len(live):
            return "fuzz_error_is(%s, '22023', 'a self-join needs one trajectory per id')" % quote(sql)
        return "fuzz_same_rows(%s, %s)" % (quote(sql), quote(pair))
    # tile_grid
    ext = rng.choice(["BOX3D(0 0 0, 1 1 1)", "BOX3D(-1e290 -5 0, 1e290 5 1)", "BOX3D(500000 4000000 -10, 500100 4000100 90)",
                      box3d_text(rng, -1e6, 1e6), "BOX3D(1 1 1, 1 1 1)"])
    r = rng.random()
    big = [2147483647, 1000000000, 100000, 65536, 1001, 3, 1]
    if r < 0.15:
        counts = [rng.choice(big) for _ in range(3)]
        while counts[0] * counts[1] * counts[2] < 2 ** 63:
            counts[rng.randrange(3)] = rng.choice([2147483647, 2147483646, 1 << 30, 5, 3])
        return "fuzz_error_like(%s, '54000', 'a grid of [0-9]+ tiles is too large')" % quote(
            "SELECT geoacc_tile_grid(%s, %d, %d, %d) LIMIT 5" % (quote(ext), counts[0], counts[1], counts[2]))
    if r < 0.25:
        counts = [rng.choice(big) for _ in range(3)]
        axis = rng.randrange(3)
        counts[axis] = rng.choice([0, -1, -2147483648])
        return "fuzz_error_is(%s, '22023', %s)" % (
            quote("SELECT geoacc_tile_grid(%s, %d, %d, %d) LIMIT 5" % (quote(ext), counts[0], counts[1], counts[2])),
            quote("n%s must be at least 1" % "xyz"[axis]))
    counts = [rng.choice(big) for _ in range(3)]
    while not 10 ** 9 <= counts[0] * counts[1] * counts[2] < 2 ** 63:
        counts[rng.randrange(3)] = rng.choice(big)
    if r < 0.92:
        k = rng.randint(1, 6)
        return ("fuzz_tile_grid_head(%s, %d, %d, %d, %d)" % (quote(ext), counts[0], counts[1], counts[2], k),
                "SET statement_timeout = '1s'")
    return ("fuzz_cancelled(%s)" % quote("SELECT count(*) FROM (SELECT geoacc_tile_grid(%s, %d, %d, %d)) g" %
                                         (quote(ext), counts[0], counts[1], counts[2])),
            "SET statement_timeout = '1s'")


def case_snapshot(rng):
    """Snapshots (a server with the GPU service): density rasters, their PNGs (empty ones too) and segment joins
    from a snapshot of random tracks against the functions over the rows (fuzz_snapshot_agrees)."""
    scale = magnitude(rng)
    rows = [trajectory(rng, rng.randint(2, 25), scale=scale) for _ in range(rng.randint(1, 8))]
    values = ", ".join("(%d, %s)" % (i, g) for i, g in enumerate(rows))
    kernel = rng.choice(["uniform", "triangular", "epanechnikov", "quartic", "triweight", "tricube", "gaussian",
                         "cosine"])
    # geoacc_raster_png's arguments from the colormap on (its errors included)
    colouring = "%s, %s, %s, %s, %s" % (
        rng.choice(["'viridis'", "'magma'", "'gray'", "E'0% 0 0 255 0\\n100% 255 0 0'", "'nope'"]),
        rng.choice(["'log'", "'linear'", "'sqrt'"]),
        *rng.choice([("NULL", "NULL"), ("0", "NULL"), ("NULL", "5"), ("1", "5"), ("5", "1"), ("-0.0", "2")]),
        rng.choice(["true", "false", "NULL"]))
    w, h = rng.randint(1, 40), rng.randint(1, 40)
    return "fuzz_snapshot_agrees(%s, %d, %d, '%s', %d, '%s', %s, %s, %s, %s, %d, %d)" % (
        quote(values), w, h, kernel, rng.choice([1, 3, 5, 7]), rng.choice(["count", "time"]),
        rng.choice(["true", "false"]), num(scale * rng.choice([0.01, 0.5, 3])), quote(colouring),
        rng.choice(["true", "false"]), *rng.choice([(w, h), (w + 1, h), (w, h + 1)]))


FUNCTIONS = {
    "simplify": case_simplify,
    "simplify_geography": case_simplify_geography,
    "twed": case_twed,
    "twed_float32": case_twed_float32,
    "twed_matrix": case_twed_matrix,
    "twed_pairs": case_twed_pairs,
    "density_raster": case_density,
    "density_state": case_density_state,
    "raster_png": case_png,
    "compression_stats": case_compression,
    "segment_join": case_segment_join,
    "mesh_clip": case_mesh_clip,
    "mesh_tileset": case_mesh_tileset,
    "make_trajectories": case_make_trajectories,
    "ply_counts": case_ply_counts,
    "make_trajectories_us": case_make_trajectories_us,
    "mesh_clip_grid": case_mesh_clip_grid,
    "mesh_clip_scaled": case_mesh_clip_scaled,
    "segment_join_scaled": case_segment_join_scaled,
    "events": case_events,
    "hostile": case_hostile,
}

# families that need a server with the GPU service, run only when named (--functions snapshot)
SERVICE_FUNCTIONS = {
    "snapshot": case_snapshot,
}

# --------------------------------------------------------------- driver


def quote(sql):
    return "'" + sql.replace("'", "''") + "'"


def psql(script, database):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
        name = f.name
    try:
        return subprocess.run(["psql", "-X", "-q", "-At", "-d", database, "-f", name],
                              capture_output=True, text=True)
    finally:
        os.unlink(name)


def single_user(lines, database, datadir, wrap):
    """The statements in a single-user backend; stdout as psql -At would give the last query's rows."""
    # -j: a statement ends at a semicolon followed by an empty line, so one may span lines
    r = subprocess.run(wrap + ["postgres", "--single", "-j", "-D", datadir, database],
                       input="\n\n".join(lines) + "\n\n", capture_output=True, text=True)
    # each row's one column as debugtup prints it: '\t 1: row = "..."\t(typeid = ...'
    rows = re.findall(r'^\t 1: row = "(.*?)"\t\(typeid = ', r.stdout, re.M | re.S)
    stderr = r.stderr if r.returncode == 0 else "%s\n(the backend exited with %d)" % (r.stderr, r.returncode)
    return subprocess.CompletedProcess(r.args, r.returncode, "\n".join(rows), stderr)


def start_time(database):
    r = psql("SELECT pg_postmaster_start_time();", database)
    return r.stdout.strip() if r.returncode == 0 else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--cases", type=int, default=200, help="cases per function")
    p.add_argument("--functions", default=",".join(FUNCTIONS))
    p.add_argument("--only", type=int, default=None, help="run one case number (with its seed)")
    p.add_argument("--database", default=os.environ.get("PGDATABASE", "geoacc_fuzz"))
    p.add_argument("--settings", default="", help="SET commands run first, e.g. \"SET geoacc.device = 'gpu'\"")
    p.add_argument("--single", metavar="DATADIR", help="run each batch in a single-user backend of this cluster")
    p.add_argument("--wrap", default="", help="with --single: the command that starts the backend")
    args = p.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
    print("fuzz: seed %d, %d cases per function" % (seed, args.cases), flush=True)

    if not args.single:
        with open(os.path.join(HERE, "fuzz_setup.sql")) as f:
            setup = f.read()
        r = psql(setup, args.database)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            sys.exit(2)
    boot = start_time(args.database) if not args.single else None
    passed = failed = 0
    began = time.time()
    for name in args.functions.split(","):
        gen = FUNCTIONS.get(name) or SERVICE_FUNCTIONS[name]
        rng = random.Random("%d/%s" % (seed, name))
        ran = fails = 0
        family_began = time.time()
        for first in range(0, args.cases, BATCH):
            # made batch by batch from the family's generator: case i is the same in any run of the seed
            batch = [(i, gen(rng)) for i in range(first, min(first + BATCH, args.cases))]
            if args.only is not None:
                batch = [c for c in batch if c[0] == args.only]
            if not batch:
                continue
            ran += len(batch)
            # a table of this session's own: runs side by side do not mix
            # jit off: the references' self-joins cost enough to be compiled, which takes longer than running them
            lines = ["SET client_min_messages = error;", "SET jit = off;", args.settings + (";" if args.settings else ""),
                     "CREATE TEMP TABLE fuzz_result (id int, ok boolean, detail text);"]
            for i, cond in batch:
                if isinstance(cond, tuple):
                    # a case with a setting of its own (a statement_timeout): set for its statement alone
                    cond, setting = cond
                    lines += [setting + ";", "SELECT fuzz_record(%d, %s, %s);" % (i, quote(name), quote(cond)),
                              "RESET %s;" % setting.split()[1]]
                else:
                    lines.append("SELECT fuzz_record(%d, %s, %s);" % (i, quote(name), quote(cond)))
            lines.append("SELECT id || '|' || CASE WHEN ok THEN 't' ELSE 'f' END || '|' || coalesce(detail, '') AS row "
                         "FROM fuzz_result ORDER BY id;")
            if args.single:
                r = single_user(lines, args.database, args.single, shlex.split(args.wrap))
            else:
                r = psql("\n".join(lines), args.database)
            seen = {}
            for line in r.stdout.splitlines():
                parts = line.split("|", 2)
                if len(parts) == 3 and parts[0].isdigit():
                    seen[int(parts[0])] = (parts[1] == "t", parts[2])
            for i, cond in batch:
                cond = cond[0] if isinstance(cond, tuple) else cond
                ok, detail = seen.get(i, (False, "no result: " + r.stderr.strip()[-300:]))
                if ok:
                    passed += 1
                else:
                    failed += 1
                    fails += 1
                    print("FAIL %s case %d (replay: --seed %d --functions %s --only %d): %s\n    %s" %
                          (name, i, seed, name, i, detail, cond[:600]), flush=True)
            if args.single:
                if r.returncode != 0:
                    failed += 1
                    print("FAIL %s: the single-user backend exited with %d during cases %d-%d (seed %d)" %
                          (name, r.returncode, batch[0][0], batch[-1][0], seed), flush=True)
            elif start_time(args.database) != boot:
                failed += 1
                print("FAIL %s: the server restarted during cases %d-%d (seed %d)" %
                      (name, batch[0][0], batch[-1][0], seed), flush=True)
                boot = start_time(args.database)
        print("fuzz: %-17s %d cases, %d failed, %.0f s" % (name, ran, fails, time.time() - family_began),
              flush=True)
    print("fuzz: %.0f s" % (time.time() - began))
    print("fuzz: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
