/*
 * upgrade.c
 *
 * An older version's SQL declarations against this library, between
 * installing the new library and ALTER EXTENSION geoacc UPDATE: the C
 * functions that only an older extension script names (so that it still
 * installs), and the refusal, asking for the update, of a call through an
 * older declaration whose arguments no longer match the C function.
 */
#include "geoacc.h"

void
GeoaccOlderDeclaration(const char *function)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("function %s was declared by an older version of geoacc", function),
			 errdetail("The extension's SQL objects are older than the geoacc library, which no longer takes "
					   "the arguments they pass."),
			 errhint("Update the extension's SQL objects with ALTER EXTENSION geoacc UPDATE.")));
}

/*
 * geoacc 0.1.0: the serial functions of gpu_density_raster's internal state
 * (since 0.2.0 its state is geoacc_density_state, which needs none)
 */
PG_FUNCTION_INFO_V1(gpu_density_raster_serialfn);
Datum
gpu_density_raster_serialfn(PG_FUNCTION_ARGS)
{
	GeoaccOlderDeclaration("gpu_density_raster_serialfn");
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(gpu_density_raster_deserialfn);
Datum
gpu_density_raster_deserialfn(PG_FUNCTION_ARGS)
{
	GeoaccOlderDeclaration("gpu_density_raster_deserialfn");
	PG_RETURN_NULL();
}
