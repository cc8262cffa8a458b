-- gpu_density_raster results read by PostGIS raster itself (needs postgis_raster).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS postgis_raster;
RESET client_min_messages;
\i test/data/ais_fixture.sql

-- a 4 x 3 raster of 2 x 1 cells over BOX(100 200, 108 203): what ST_RastFromWKB sees
CREATE TEMP TABLE drp_small AS
SELECT ST_RastFromWKB(gpu_density_raster(ST_SetSRID('LINESTRING M (101 201.5 1, 107 202.5 2)'::geometry, 32618),
	ST_MakeBox2D(ST_Point(100, 200), ST_Point(108, 203)), 4, 3, 'gaussian', 1)) AS rast;
SELECT ST_Width(rast) AS width, ST_Height(rast) AS height, ST_SRID(rast) AS srid, ST_NumBands(rast) AS bands,
	ST_PixelWidth(rast) AS pixel_width, ST_PixelHeight(rast) AS pixel_height, ST_ScaleY(rast) AS scale_y,
	ST_UpperLeftX(rast) AS upper_left_x, ST_UpperLeftY(rast) AS upper_left_y,
	ST_BandPixelType(rast) AS pixel_type, ST_BandNoDataValue(rast) AS nodata
FROM drp_small;
SELECT ST_AsText(ST_Envelope(rast)) AS envelope,
	ST_Equals(ST_Envelope(rast), ST_SetSRID(ST_MakeEnvelope(100, 200, 108, 203), 32618)) AS envelope_is_extent
FROM drp_small;
-- the track's vertices are in column 1 row 2 and column 4 row 1 (rows from the north); two samples
-- between them
SELECT ST_Value(rast, 1, 1, 2) AS "v(1,2)", ST_Value(rast, 1, 2, 2) AS "v(2,2)", ST_Value(rast, 1, 3, 1) AS "v(3,1)",
	ST_Value(rast, 1, 4, 1) AS "v(4,1)",
	ST_Value(rast, ST_SetSRID(ST_Point(101, 201.5), 32618)) AS at_first_vertex,
	ST_Value(rast, ST_SetSRID(ST_Point(107, 202.5), 32618)) AS at_last_vertex,
	(ST_SummaryStats(rast)).sum AS total
FROM drp_small;

-- a vertex on a cell corner is in the cell ST_WorldToRasterCoord gives (east and south of the corner)
SELECT (ST_WorldToRasterCoord(rast, 102, 202)).*,
	ST_Value(rast, 1, (ST_WorldToRasterCoord(rast, 102, 202)).columnx, (ST_WorldToRasterCoord(rast, 102, 202)).rowy)
		AS count_there,
	(ST_SummaryStats(rast)).sum AS total
FROM (SELECT ST_RastFromWKB(gpu_density_raster(ST_SetSRID('LINESTRING M (102 202 1, 102.5 202.5 2)'::geometry, 32618),
	ST_MakeBox2D(ST_Point(100, 200), ST_Point(108, 203)), 4, 3, 'gaussian', 1)) AS rast) x;

-- The AIS tracks over Virginia Beach: the raster covers the extent, and the raw counts of the vertices
-- (no interpolation, kernel_size 1) match the cells PostGIS assigns them with ST_WorldToRasterCoord
CREATE TEMP TABLE drp_ais AS
SELECT ST_RastFromWKB(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4109000)'::box2d, 556, 250,
	'gaussian', 1, false)) AS raw,
	ST_RastFromWKB(gpu_density_raster(traj, 'BOX(369000 3984000,647000 4109000)'::box2d, 556, 250)) AS smooth
FROM ais_tracks;
SELECT ST_Equals(ST_Envelope(raw), ST_SetSRID(ST_MakeEnvelope(369000, 3984000, 647000, 4109000), 32618))
	AS envelope_is_extent,
	ST_PixelWidth(raw) AS pixel_width, ST_PixelHeight(raw) AS pixel_height
FROM drp_ais;
WITH vertices AS (
	SELECT (ST_WorldToRasterCoord(raw, d.geom)).*
	FROM drp_ais, ais_tracks t, ST_DumpPoints(t.traj) d
	WHERE ST_Intersects(d.geom, ST_SetSRID(ST_MakeEnvelope(369000, 3984000, 647000, 4109000), 32618))
), cells AS (
	SELECT columnx, rowy, count(*) AS n FROM vertices GROUP BY 1, 2
)
SELECT count(*) AS cells, sum(n) AS vertices,
	count(*) FILTER (WHERE ST_Value(raw, 1, columnx, rowy) <> n) AS mismatches,
	(SELECT (ST_SummaryStats(raw)).sum FROM drp_ais) = sum(n) AS raster_sum_is_vertex_count
FROM cells, drp_ais;
-- smoothing keeps the mass (apart from what spreads past the edges) and changes no cell far from tracks
SELECT (ST_SummaryStats(smooth)).sum > (ST_SummaryStats(raw)).sum AS interpolation_adds_samples,
	(ST_SummaryStats(smooth)).min = 0 AS empty_cells_stay_empty,
	(ST_SummaryStats(smooth)).max < (ST_SummaryStats(raw)).max AS smoothing_lowers_peaks
FROM drp_ais;

-- geoacc_raster_png reads any raster WKB: here a PostGIS-made 16-bit band with nodata (a palette PNG, colour
-- type 3, its nodata pixel at a transparent palette entry)
SELECT substring(png FROM 1 FOR 8) = '\x89504e470d0a1a0a'::bytea AS png_signature,
	get_byte(png, 19) AS width, get_byte(png, 23) AS height, get_byte(png, 25) AS colour_type
FROM (SELECT geoacc_raster_png(ST_AsBinary(ST_SetValues(
	ST_AddBand(ST_MakeEmptyRaster(3, 2, 0, 2, 1, -1, 0, 0, 0), '16BUI'::text, 0, 0), 1, 1, 1,
	ARRAY[[0, 100, 200], [300, 400, 65535]]::double precision[][]))) AS png) x;
-- and a 32-bit float band without nodata
SELECT substring(png FROM 1 FOR 8) = '\x89504e470d0a1a0a'::bytea AS png_signature, get_byte(png, 25) AS colour_type
FROM (SELECT geoacc_raster_png(ST_AsBinary(ST_SetValues(
	ST_AddBand(ST_MakeEmptyRaster(3, 2, 0, 2, 1, -1, 0, 0, 0), '32BF'::text, 0, NULL), 1, 1, 1,
	ARRAY[[0.5, 1, 2], [3, 4, 5]]::double precision[][])), 'magma', 'linear') AS png) x;

-- values spanning the whole float8 range spread over the colormap as any others do
SELECT geoacc_raster_png(ST_AsBinary(ST_SetValue(ST_AddBand(ST_MakeEmptyRaster(30, 20, 0, 0, 1), '64BF'::text,
		-1e308::float8, NULL::float8), 7, 7, 1e308)), 'viridis', 'linear')
	= geoacc_raster_png(ST_AsBinary(ST_SetValue(ST_AddBand(ST_MakeEmptyRaster(30, 20, 0, 0, 1), '64BF'::text,
		-1::float8, NULL::float8), 7, 7, 1)), 'viridis', 'linear') AS extremes_as_unit_range,
	geoacc_raster_png(ST_AsBinary(ST_SetValue(ST_AddBand(ST_MakeEmptyRaster(30, 20, 0, 0, 1), '64BF'::text,
		-1e308::float8, NULL::float8), 7, 7, 1e308)), 'viridis', 'linear')
	<> geoacc_raster_png(ST_AsBinary(ST_AddBand(ST_MakeEmptyRaster(30, 20, 0, 0, 1), '64BF'::text,
		-1::float8, NULL::float8)), 'viridis', 'linear') AS not_uniform;

DROP TABLE drp_small, drp_ais;
DROP EXTENSION postgis_raster;
