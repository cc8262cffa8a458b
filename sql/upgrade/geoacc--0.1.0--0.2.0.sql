-- geoacc 0.1.0 -> 0.2.0, first part: drop the 0.1.0 objects that 0.2.0 changes in a way CREATE OR REPLACE
-- cannot (arguments, OUT columns, an aggregate's state type) or no longer has.  The Makefile appends the
-- whole 0.2.0 script, which replaces the objects kept and creates the others.  An object of the user's that
-- depends on a dropped function (a view calling it) stops the update: drop it first, make it again after.

\echo Use "ALTER EXTENSION geoacc UPDATE TO '0.2.0'" to load this file. \quit

-- new OUT columns: geoacc_devices() in_use; geoacc_status() gpu_device, pid, gpu_memory_total,
-- gpu_memory_reserved; geoacc_stats() waits, wait_ms
DROP FUNCTION geoacc_devices();
DROP FUNCTION geoacc_status();
DROP FUNCTION geoacc_stats();

-- gpu_density_raster: the state is geoacc_density_state instead of internal (no serial functions); the
-- 0.2.0 script makes the aggregates again, with the extent as box2d or geometry, mode and weight
DROP AGGREGATE gpu_density_raster(geometry, box2d, int, int);
DROP AGGREGATE gpu_density_raster(geometry, box2d, int, int, text);
DROP AGGREGATE gpu_density_raster(geometry, box2d, int, int, text, int);
DROP AGGREGATE gpu_density_raster(geometry, box2d, int, int, text, int, boolean);
DROP FUNCTION gpu_density_raster_transfn(internal, geometry, box2d, int, int);
DROP FUNCTION gpu_density_raster_transfn(internal, geometry, box2d, int, int, text);
DROP FUNCTION gpu_density_raster_transfn(internal, geometry, box2d, int, int, text, int);
DROP FUNCTION gpu_density_raster_transfn(internal, geometry, box2d, int, int, text, int, boolean);
DROP FUNCTION gpu_density_raster_finalfn(internal);
DROP FUNCTION gpu_density_raster_combinefn(internal, internal);
DROP FUNCTION gpu_density_raster_serialfn(internal);
DROP FUNCTION gpu_density_raster_deserialfn(bytea, internal);

-- geoacc_raster_png: vmin, vmax and transparent_zero
DROP FUNCTION geoacc_raster_png(bytea, text, text);

-- gpu_dp_simplify: preserve_collapsed third, as in ST_Simplify
DROP FUNCTION gpu_dp_simplify(geometry, float8, boolean, boolean);

-- gpu_twed: times as float8[] or timestamptz[] ("any"), defaults for nu and lambda, use_z;
-- gpu_twed_matrix: k and use_z
DROP FUNCTION gpu_twed(float8[], float8[], float8[], float8[], float8, float8, int, boolean, boolean);
DROP FUNCTION gpu_twed(geometry, geometry, float8, float8, int, boolean, boolean);
DROP FUNCTION gpu_twed_matrix(text, text, float8, float8, int, boolean, boolean);

