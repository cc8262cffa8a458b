-- geoacc_raster: gpu_density_rast (gpu_density_raster as a PostGIS raster) and geoacc_raster_png(raster),
-- checked with PostGIS's own raster functions (needs postgis_raster).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS postgis_raster;
CREATE EXTENSION geoacc_raster;
RESET client_min_messages;
\i test/data/ais_fixture.sql

-- the raster is the WKB form's, byte for byte: georeferenced (upper-left corner xmin ymax, scale, SRID),
-- one 64BF band without nodata
CREATE TEMP TABLE gr_ais AS
SELECT gpu_density_rast(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31) AS rast,
	gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 300, 600, 'gaussian', 31) AS wkb
FROM ais_tracks;
SELECT ST_AsBinary(rast) = wkb AS same_as_wkb, (ST_MetaData(rast)).*, ST_SRID(rast) AS srid
FROM gr_ais;
SELECT (ST_BandMetaData(rast, 1)).pixeltype, (ST_BandMetaData(rast, 1)).nodatavalue,
	(ST_BandMetaData(rast, 1)).isoutdb, ST_Equals(ST_Envelope(rast),
		ST_MakeEnvelope(369000, 3984000, 647000, 4526000, 32618)) AS envelope_is_extent
FROM gr_ais;
-- ST_Value at a track's vertex: the raw count of the cell PostGIS finds for it
SELECT ST_Value(raw, ST_SetSRID(ST_Point(101, 201.5), 32618)) AS at_vertex, ST_Value(raw, 1, 1, 2) AS "v(1,2)",
	(ST_SummaryStats(raw)).sum AS total
FROM (SELECT gpu_density_rast(ST_SetSRID('LINESTRING M (101 201.5 1, 107 202.5 2)'::geometry, 32618),
	ST_MakeBox2D(ST_Point(100, 200), ST_Point(108, 203)), 4, 3, 'gaussian', 1) AS raw) x;
-- every form of the aggregate: the geometry extent, points, the time mode with weights
SELECT ST_AsBinary(gpu_density_rast(ST_Points(traj), ST_MakeEnvelope(369000, 3984000, 647000, 4526000, 32618), 100, 200))
		= gpu_density_raster(ST_Points(traj), ST_MakeEnvelope(369000, 3984000, 647000, 4526000, 32618), 100, 200)
		AS points_geometry_extent,
	ST_AsBinary(gpu_density_rast(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 100, 200, 'quartic', 5, true,
		'time', id % 3)) = gpu_density_raster(traj, 'BOX(369000 3984000,647000 4526000)'::box2d, 100, 200, 'quartic', 5,
		true, 'time', id % 3) AS time_weighted
FROM ais_tracks;
SELECT gpu_density_rast(traj, 'BOX(0 0,1 1)'::box2d, 2, 2) IS NULL AS no_rows FROM ais_tracks WHERE false;

-- Seamless tiles, read by PostGIS: the four 48 x 48 tiles of an extent, each made on its own, are aligned
-- with the 96 x 96 raster of the whole (ST_SameAlignment), equal its quarters (ST_DumpValues, bit for bit),
-- and ST_Union puts them back together into it
CREATE TEMP TABLE gr_tiles AS
SELECT tr, tc, gpu_density_rast(traj, ST_MakeEnvelope(557056 + tc * 24576, 4497408 - tr * 24576,
	581632 + tc * 24576, 4521984 - tr * 24576, 32618), 48, 48, 'gaussian', 15) AS rast
FROM ais_tracks, (VALUES (0, 0), (0, 1), (1, 0), (1, 1)) t(tr, tc)
GROUP BY tr, tc;
CREATE TEMP TABLE gr_whole AS
SELECT gpu_density_rast(traj, ST_MakeEnvelope(557056, 4472832, 606208, 4521984, 32618), 96, 96, 'gaussian', 15) AS rast
FROM ais_tracks;
SELECT bool_and(ST_SameAlignment(t.rast, w.rast)) AS aligned,
	bool_and((ST_DumpValues(t.rast, 1))::float8[] = (ST_DumpValues(w.rast, 1))[tr * 48 + 1:tr * 48 + 48][tc * 48 + 1:tc * 48 + 48])
		AS tiles_are_quarters,
	(SELECT ST_DumpValues(ST_Union(rast), 1) FROM gr_tiles) = ST_DumpValues(w.rast, 1) AS union_is_whole
FROM gr_tiles t, gr_whole w
GROUP BY w.rast;
-- web-map tiles: the four z = 12 tiles (ST_TileEnvelope) of the z = 11 tile over New York harbour, 256 x 256
-- each, against the 512 x 512 raster of that tile, the tracks in EPSG:3857
CREATE TEMP TABLE gr_3857 AS SELECT ST_Transform(traj, 3857) AS traj FROM ais_tracks;
SELECT bool_and((ST_DumpValues(c.rast, 1))::float8[]
		= (ST_DumpValues(p.rast, 1))[(c.y - 1540) * 256 + 1:(c.y - 1540) * 256 + 256][(c.x - 1206) * 256 + 1:(c.x - 1206) * 256 + 256])
	AS children_are_quarters_of_parent,
	sum((ST_SummaryStats(c.rast)).sum) > 0 AS not_empty
FROM (SELECT x, y, gpu_density_rast(traj, ST_TileEnvelope(12, x, y), 256, 256, 'gaussian', 9) AS rast
		FROM gr_3857, generate_series(1206, 1207) x, generate_series(1540, 1541) y
		WHERE traj && ST_TileEnvelope(12, x, y, margin => 8.0 / 256) GROUP BY x, y) c,
	(SELECT gpu_density_rast(traj, ST_TileEnvelope(11, 603, 770), 512, 512, 'gaussian', 9) AS rast FROM gr_3857) p;

-- geoacc_raster_png(raster) is geoacc_raster_png of its WKB; with GDAL's PNG driver PostGIS reads it back:
-- one 8-bit band of palette indices, min(255, floor(256 x)) for the position x on the colour scale
SELECT geoacc_raster_png(rast, 'magma', 'sqrt', 0, 5, true) = geoacc_raster_png(wkb, 'magma', 'sqrt', 0, 5, true)
	AS same_as_wkb_png,
	geoacc_raster_png(NULL::raster) IS NULL AS null_raster
FROM gr_ais;
SET postgis.gdal_enabled_drivers = 'PNG';
WITH decoded AS (
	SELECT ST_FromGDALRaster(geoacc_raster_png(rast, 'gray', 'linear')) AS png, rast,
		(ST_SummaryStats(rast)).min AS lo, (ST_SummaryStats(rast)).max AS hi
	FROM gr_whole
)
SELECT ST_NumBands(png) AS bands, ST_Width(png) AS width, ST_Height(png) AS height,
	count(*) FILTER (WHERE ST_Value(png, 1, c, r) <> least(255, floor(256 * (ST_Value(rast, 1, c, r) - lo) / (hi - lo))))
		AS index_mismatches
FROM decoded, generate_series(1, 96) c, generate_series(1, 96) r
GROUP BY png;
-- a ramp (RGB): the colours PostGIS reads back are the ramp interpolated between its stops
WITH decoded AS (
	SELECT ST_FromGDALRaster(geoacc_raster_png(rast, E'0% 0 0 255\n50% 255 255 255\n100% 255 0 0', 'linear', 0, 10))
		AS png, rast
	FROM gr_whole
), expected AS (
	SELECT c, r, ST_Value(png, 1, c, r) AS red, ST_Value(png, 2, c, r) AS green, ST_Value(png, 3, c, r) AS blue,
		least(ST_Value(rast, 1, c, r) / 10, 1) AS x
	FROM decoded, generate_series(1, 96) c, generate_series(1, 96) r
)
SELECT (SELECT ST_NumBands(png) FROM decoded) AS bands,
	count(*) FILTER (WHERE (red, green, blue) IS DISTINCT FROM
		(CASE WHEN x <= 0.5 THEN round(255 * x / 0.5) ELSE 255 END,
		 CASE WHEN x <= 0.5 THEN round(255 * x / 0.5) ELSE round(255 - 255 * (x - 0.5) / 0.5) END,
		 CASE WHEN x <= 0.5 THEN 255 ELSE round(255 - 255 * (x - 0.5) / 0.5) END)) AS colour_mismatches
FROM expected;
-- the PostGIS route to a PNG, for comparison: ST_ColorMap, then ST_AsPNG
SELECT substring(ST_AsPNG(ST_ColorMap(rast, 1, 'bluered')) FROM 1 FOR 8) = '\x89504e470d0a1a0a'::bytea AS postgis_png
FROM gr_whole;
RESET postgis.gdal_enabled_drivers;

DROP TABLE gr_ais, gr_tiles, gr_whole, gr_3857;
DROP EXTENSION geoacc_raster;
SET client_min_messages = warning;
DROP EXTENSION postgis_raster;
RESET client_min_messages;
