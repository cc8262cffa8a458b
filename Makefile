# geoacc: PostgreSQL extension with CUDA kernels, built with PGXS.
#
# `make` builds the compute core in cuda/ (CUDA kernels plus CPU twins) into a
# static archive and links it, with the static CUDA runtime, into geoacc.so.
# Without nvcc on the PATH (or with `make NVCC=`) it builds a CPU-only core.
# CUDA_ARCHS picks the machine code; PTX for the newest is always added.

EXTENSION = geoacc geoacc_raster
# the version: default_version in geoacc.control, and nowhere else (the C code gets it as GEOACC_VERSION,
# geoacc_raster.control is made from geoacc_raster.control.in)
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" geoacc.control)

MODULE_big = geoacc
OBJS = src/geoacc.o src/device.o src/budget.o src/call.o src/service.o src/stats.o src/geometry.o src/geography.o src/inner_query.o
OBJS += src/density_raster.o src/density_state.o src/raster_wkb.o src/density_raster_png.o
OBJS += src/simplify.o
DATA_built = sql/geoacc--$(EXTVERSION).sql
# geoacc_raster: the companion extension for postgis_raster (SQL only; its functions are in geoacc.so)
DATA_built += sql/geoacc_raster--$(EXTVERSION).sql
# released versions' scripts, frozen as they shipped (sql/geoacc--0.1.0.sql), and upgrade scripts between them
# (none yet of geoacc_raster, which came after 0.1.0)
DATA = $(filter-out $(DATA_built),$(wildcard sql/geoacc--*.sql))

# extension script, assembled from one piece per feature
INSTALL_SQL = sql/install/geoacc.sql sql/install/device.sql
INSTALL_SQL += sql/install/density_raster.sql
INSTALL_SQL += sql/install/simplify.sql

REGRESS = setup device budget ais
REGRESS += density_raster density_raster_postgis geoacc_raster
REGRESS += simplify
# each test runs alone, in any order: the database starts with postgis and geoacc, and a test that needs the
# AIS tables loads them when they are missing (test/data/ais_fixture.sql)
REGRESS_OPTS = --inputdir=. --load-extension=postgis --load-extension=geoacc
# `make installcheck` runs the core tests (check-core, no server) first, then pg_regress; naming tests
# (make installcheck REGRESS="simplify twed") runs only those pg_regress tests
ifneq ($(origin REGRESS),command line)
REGRESS_PREP = check-core
endif

# twed: Time Warp Edit Distance
OBJS += src/twed.o
INSTALL_SQL += sql/install/twed.sql
REGRESS += twed inner_query

# segment join: distance-threshold join of trajectory segments
OBJS += src/segment_join.o
INSTALL_SQL += sql/install/segment_join.sql
REGRESS += segment_join

# events: encounters, stops and zone visits on the segment join
OBJS += src/events.o
INSTALL_SQL += sql/install/events.sql
REGRESS += events

# geography: the trajectory functions in metres on longitude and latitude
REGRESS += geography

# mesh_clip: clipping triangle meshes by boxes
OBJS += src/mesh_clip.o
INSTALL_SQL += sql/install/mesh_clip.sql
REGRESS += mesh_clip mesh_ply

# mesh_tileset: 3D Tiles level-of-detail tilesets of meshes
OBJS += src/mesh_tileset.o
INSTALL_SQL += sql/install/mesh_tileset.sql
REGRESS += mesh_tileset

# snapshot: query results kept in the GPU service's memory, density tiles from them (tested on a server with
# the service: installcheck-service)
OBJS += src/snapshot.o
INSTALL_SQL += sql/install/snapshot.sql

# make_trajectories: trajectories from raw fixes
OBJS += src/make_trajectories.o
INSTALL_SQL += sql/install/make_trajectories.sql
REGRESS += make_trajectories

# ------------------------------------------------ versions and upgrades
# A released version's script is frozen in sql/ as it shipped (sql/geoacc--0.1.0.sql), as is a released
# upgrade script.  The upgrade into this version from an earlier one, sql/geoacc--FROM--$(EXTVERSION).sql, is
# made here: first sql/upgrade/geoacc--FROM--$(EXTVERSION).sql (by hand: it drops what the new script changes
# in a way CREATE OR REPLACE cannot, such as arguments, OUT columns or an aggregate's state type), then the
# whole new script, whose statements can all run over the earlier version's objects (CREATE OR REPLACE; the
# type only when it is missing).  On release, both generated scripts are committed into sql/ and the
# sql/upgrade/ piece removed.  The regress test `upgrade` checks the result against a fresh install.
UPGRADE_PIECES = $(wildcard sql/upgrade/geoacc--*--$(EXTVERSION).sql)
DATA_built += $(patsubst sql/upgrade/%,sql/%,$(UPGRADE_PIECES))
REGRESS += upgrade
OBJS += src/upgrade.o

# ---------------------------------------------------------------- the core
NVCC ?= $(shell command -v nvcc 2>/dev/null)
CUDA_ARCHS ?= 75 80 86 89 90
CXX ?= g++

ifneq ($(strip $(NVCC)),)
CORE_MODE = gpu
CUDA_HOME ?= $(patsubst %/bin/,%,$(dir $(realpath $(NVCC))))
CORE_DEFS = -DGEOACC_WITH_CUDA
CORE_CU = $(wildcard cuda/*.cu)
CORE_CPP = $(filter-out cuda/device_none.cpp,$(wildcard cuda/*.cpp))
CUDA_LIBS = -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread
else
CORE_MODE = cpu
CORE_DEFS =
CORE_CU =
CORE_CPP = $(wildcard cuda/*.cpp)
CUDA_LIBS =
endif

CORE_DIR = cuda/build-$(CORE_MODE)
CORE_LIB = $(CORE_DIR)/libgeoacc_core.a
CORE_OBJS = $(patsubst cuda/%.cu,$(CORE_DIR)/%.cu.o,$(CORE_CU)) \
			$(patsubst cuda/%.cpp,$(CORE_DIR)/%.o,$(CORE_CPP))

GENCODE = $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
		  -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
# no FMA contraction anywhere: kernels and CPU twins must round alike
CORE_CXXFLAGS = -std=c++17 -O2 -fPIC -fvisibility=hidden -ffp-contract=off -Wall -Wextra $(CORE_DEFS)
NVCC_FLAGS = -std=c++17 -O3 --fmad=false --threads 0 $(GENCODE) $(CORE_DEFS) \
			 -Xcompiler -fPIC,-fvisibility=hidden,-ffp-contract=off,-Wall,-Wextra

PG_CPPFLAGS = -Icuda -DGEOACC_VERSION='"$(EXTVERSION)"'
# a function used without its declaration is an error in every build: it would link, then fail to load
PG_CFLAGS = -Werror=implicit-function-declaration -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
# GEOACC_WERROR=1 (CI): every warning of the C, C++ and CUDA compilers is an error
ifeq ($(GEOACC_WERROR),1)
PG_CFLAGS += -Werror
CORE_CXXFLAGS += -Werror
NVCC_FLAGS += -Werror all-warnings -Xcompiler -Werror
endif
SHLIB_LINK = $(CORE_LIB) $(CUDA_LIBS) -lstdc++ -lz -lm
# export only what PostgreSQL looks up: the magic block, _PG_init, the service's background worker and the
# SQL-callable functions
SHLIB_LINK += -Wl,--version-script=src/exports.map

EXTRA_CLEAN = cuda/build-gpu cuda/build-cpu cuda/.build-mode geoacc_raster.control test/core/geoacc_core_tests src/exports.map \
			  test/data/scale_tracks test/data/scale_fixes

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# the glue depends on the core's header only (a change inside the core relinks, it does not recompile the glue);
# everything is rebuilt when the core switches between the CUDA and CPU-only builds
$(shell [ "$$(cat cuda/.build-mode 2>/dev/null)" = "$(CORE_MODE)" ] || echo $(CORE_MODE) > cuda/.build-mode)
$(OBJS): src/geoacc.h cuda/geoacc_core.h cuda/.build-mode
src/density_raster_png.o: src/density_raster_colormaps.h
src/density_raster.o src/density_state.o: src/density_raster.h
# the files that use GEOACC_VERSION, which comes from geoacc.control
src/geoacc.o src/device.o: geoacc.control
$(shlib): $(CORE_LIB) src/exports.map

src/exports.map: $(OBJS:.o=.c)
	{ echo '{ global: Pg_magic_func; _PG_init; GeoaccServiceMain;'; \
	  sed -n 's/^PG_FUNCTION_INFO_V1(\(.*\));$$/\1; pg_finfo_\1;/p' $^; \
	  echo 'local: *; };'; } > $@

$(CORE_DIR)/%.cu.o: cuda/%.cu
	@mkdir -p $(CORE_DIR)
	$(NVCC) $(NVCC_FLAGS) -MMD -MP -c $< -o $@

$(CORE_DIR)/%.o: cuda/%.cpp
	@mkdir -p $(CORE_DIR)
	$(CXX) $(CORE_CXXFLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

-include $(CORE_OBJS:.o=.d)

sql/geoacc--$(EXTVERSION).sql: $(INSTALL_SQL)
	cat $^ > $@

sql/geoacc_raster--$(EXTVERSION).sql: sql/install/geoacc_raster.sql
	cat $^ > $@

sql/geoacc--%--$(EXTVERSION).sql: sql/upgrade/geoacc--%--$(EXTVERSION).sql sql/geoacc--$(EXTVERSION).sql
	cat $^ > $@

geoacc_raster.control: geoacc_raster.control.in geoacc.control
	sed "s/@EXTVERSION@/$(EXTVERSION)/" $< > $@

# ------------------------------------------------ core tests (no server)
CORE_TEST_SRC = $(wildcard test/core/*.cpp)

test/core/geoacc_core_tests: $(CORE_TEST_SRC) test/core/core_test.h test/uci_synthetic_control.h $(CORE_LIB)
	$(CXX) $(CORE_CXXFLAGS) -Icuda $(CORE_TEST_SRC) $(CORE_LIB) $(CUDA_LIBS) -lm -o $@

.PHONY: check-core
check-core: test/core/geoacc_core_tests
	test/core/geoacc_core_tests

# --------------------------------------------------------- data generator
test/data/scale_tracks: test/data/scale_tracks.c
	$(CC) -O2 -Wall -Wextra -o $@ $< -lm

test/data/scale_fixes: test/data/scale_fixes.c
	$(CC) -O2 -Wall -Wextra -o $@ $< -lm

# ----------------------------- the GPU memory budget (geoacc preloaded)
# pg_regress against a running server with geoacc in shared_preload_libraries (scripts/test.sh restarts
# its cluster so): the budget's accounting, waits and releases, without a GPU
PRELOADED_REGRESS = budget_preloaded
.PHONY: installcheck-preloaded
installcheck-preloaded:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(PRELOADED_REGRESS)

# ------------------------------------------------ the GPU service (TAP)
# test/service/service.pl: the service in its cpu mode on a server of its own (PostgreSQL::Test::Cluster; Debian's
# libipc-run-perl), with geoacc installed.  It runs from a copy in SERVICE_TESTDIR, as SERVICE_AS (initdb
# refuses root: scripts/test.sh passes runuser -u geoacc --).
SERVICE_TESTDIR ?= /tmp/geoacc-service-test
# and every pg_regress suite but those about this backend's own GPU, with every call sent to the service: on a
# server with geoacc preloaded and geoacc.service = cpu (or gpu)
SERVICE_REGRESS = $(filter-out device budget,$(REGRESS)) snapshot
.PHONY: installcheck-service
installcheck-service:
	export PGOPTIONS="$$PGOPTIONS -c geoacc.device=gpu"; $(pg_regress_installcheck) $(REGRESS_OPTS) $(SERVICE_REGRESS)

SERVICE_AS ?=
.PHONY: check-service
check-service:
	rm -rf '$(SERVICE_TESTDIR)' && mkdir -p '$(SERVICE_TESTDIR)' && cp test/service/service.pl '$(SERVICE_TESTDIR)/'
	$(if $(SERVICE_AS),chown -R $(lastword $(filter-out --,$(SERVICE_AS))) '$(SERVICE_TESTDIR)')
	cd '$(SERVICE_TESTDIR)' && $(SERVICE_AS) env TESTDIR='$(SERVICE_TESTDIR)' PATH="$(bindir):$$PATH" \
		PG_REGRESS='$(pgxsdir)/src/test/regress/pg_regress' \
		$(PROVE) -I '$(pgxsdir)/src/test/perl' $(PROVE_FLAGS) service.pl

# ------------------------------------- Citus suite (scripts/citus.sh)
# pg_regress against a running Citus coordinator (PGHOST, PGPORT) whose database CITUS_DB has the
# citus extension on every node and the workers registered; results in test/citus/results/
CITUS_REGRESS = citus_setup citus_density_raster citus_simplify citus_twed citus_segment_join citus_make_trajectories citus_settings
CITUS_DB ?= geoacc_citus
.PHONY: installcheck-citus
installcheck-citus:
	$(pg_regress_installcheck) --inputdir=test/citus --outputdir=test/citus --use-existing \
		--dbname=$(CITUS_DB) $(CITUS_REGRESS)

# regress tests that need postgis_raster, left out where it is absent (the GPU machine without
# test/device/raster-bundle.sh's bundle)
REGRESS_NEEDS_POSTGIS_RASTER =
REGRESS_NEEDS_POSTGIS_RASTER += density_raster_postgis geoacc_raster
.PHONY: print-regress print-regress-gpu
print-regress:
	@echo $(REGRESS)
print-regress-gpu:
	@echo $(filter-out $(REGRESS_NEEDS_POSTGIS_RASTER),$(REGRESS))

# ------------------------------------------ twed benchmark (core level)
EXTRA_CLEAN += test/bench/twed_bench

test/bench/twed_bench: test/bench/twed_bench.cpp cuda/geoacc_core.h test/uci_synthetic_control.h $(CORE_LIB)
	$(CXX) $(CORE_CXXFLAGS) -Icuda $< $(CORE_LIB) $(CUDA_LIBS) -lm -o $@

# ------------------- what a CUDA context costs a process (GPU builds only)
EXTRA_CLEAN += test/bench/context_cost
test/bench/context_cost: test/bench/context_cost.cpp cuda/geoacc_core.h $(CORE_LIB)
	$(CXX) $(CORE_CXXFLAGS) -I$(CUDA_HOME)/include -Icuda $< $(CORE_LIB) $(CUDA_LIBS) -lm -o $@

# ----------------------------------- segment join benchmark (core level)
EXTRA_CLEAN += test/bench/segment_join_bench

test/bench/segment_join_bench: test/bench/segment_join_bench.cpp cuda/geoacc_core.h $(CORE_LIB)
	$(CXX) $(CORE_CXXFLAGS) -Icuda $< $(CORE_LIB) $(CUDA_LIBS) -lm -o $@

# ------------------------------------- mesh clip benchmark (core level)
EXTRA_CLEAN += test/bench/mesh_clip_bench
test/core/geoacc_core_tests: test/mesh_off.h

test/bench/mesh_clip_bench: test/bench/mesh_clip_bench.cpp test/bench/mesh_bench.h cuda/geoacc_core.h test/mesh_off.h \
							$(CORE_LIB)
	$(CXX) $(CORE_CXXFLAGS) -Icuda $< $(CORE_LIB) $(CUDA_LIBS) -lm -o $@

# ------------------------------- CGAL's clipper, the baseline (no geoacc in it)
# Needs Debian's libcgal-dev, libgmp-dev and libmpfr-dev; linked statically and stripped (unused sections
# dropped) so that a small binary runs on the GPU machine, which has no CGAL (test/device/mesh-bundle.sh
# carries it there).
EXTRA_CLEAN += test/bench/cgal_clip_bench

test/bench/cgal_clip_bench: test/bench/cgal_clip_bench.cpp test/bench/mesh_bench.h
	$(CXX) -std=c++17 -O2 -DNDEBUG -DCGAL_NDEBUG -Wall -Wextra -ffunction-sections -fdata-sections \
		-static -s -Wl,--gc-sections $< -lmpfr -lgmp -o $@

# ------------------------------------ mesh tileset benchmark (core level)
# With MESHOPT_DIR (a root holding include/meshoptimizer.h and lib/libmeshoptimizer.so, as Debian's
# libmeshoptimizer-dev unpacked; test/device/tileset-bundle.sh packs it) meshopt_simplify runs over the same tiles.
EXTRA_CLEAN += test/bench/mesh_tileset_bench
ifneq ($(strip $(MESHOPT_DIR)),)
MESHOPT_FLAGS = -DGEOACC_WITH_MESHOPT -I$(MESHOPT_DIR)/include -L$(MESHOPT_DIR)/lib -Wl,-rpath,$(abspath $(MESHOPT_DIR))/lib -lmeshoptimizer
endif

test/bench/mesh_tileset_bench: test/bench/mesh_tileset_bench.cpp test/bench/mesh_bench.h cuda/geoacc_core.h $(CORE_LIB)
	$(CXX) $(CORE_CXXFLAGS) -Icuda $< $(CORE_LIB) $(CUDA_LIBS) $(MESHOPT_FLAGS) -lm -o $@
