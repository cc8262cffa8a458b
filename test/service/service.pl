# The GPU service, tested without a GPU: geoacc.service = cpu runs the same
# service (supervisor, device process, shared memory, queue) with the CPU
# implementations, and geoacc.device = gpu sends every call there.
#
# A TAP test with PostgreSQL::Test::Cluster, as PostgreSQL's own tests and
# extensions such as pgvector test concurrency: it makes its own server
# (preloading geoacc needs a restart of it), kills processes and reads its
# log, and drives many sessions at once with background_psql, none of which
# a pg_regress suite can do.
#
# Run by `make check-service` (scripts/test.sh does), as a user that may
# run initdb, with geoacc installed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('service');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'geoacc'
geoacc.service = cpu
geoacc.service_memory = '1GB'
geoacc.service_processes = 2
max_connections = 40
max_worker_processes = 16
max_parallel_workers = 8
});
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION postgis; CREATE EXTENSION geoacc;');

sub service
{
	my ($column) = @_;
	return $node->safe_psql('postgres', "SELECT $column FROM geoacc_service()");
}

# wait (up to 10 s) until `$sql` returns 't'
sub wait_true
{
	my ($sql, $what) = @_;
	ok($node->poll_query_until('postgres', $sql), $what);
}

# ------------------------------------------------------------ the service runs
is(service('mode'), 'cpu', 'the service runs in cpu mode');
wait_true("SELECT cardinality(pids) = 2 AND supervisor_pid IS NOT NULL FROM geoacc_service()",
	'the supervisor has started the two device processes');
my $device_pid = service('pids[1]');
# its title, as ps shows it
like(slurp_file("/proc/$device_pid/cmdline"), qr/geoacc service device process \(CPU\)/,
	'the device process is named in ps');

# test data: series, trajectories, points, a mesh, fixes
$node->safe_psql(
	'postgres', q{
CREATE TABLE series AS
	SELECT g AS id, array_agg(sin(g * 0.37 * i) + cos(i * 0.11) ORDER BY i) AS v
	FROM generate_series(1, 60) g, generate_series(1, 80) i GROUP BY g;
CREATE TABLE long_series AS
	SELECT g AS id, array_agg(sin(g * i) ORDER BY i) AS v
	FROM generate_series(1, 300) g, generate_series(1, 500) i GROUP BY g;
CREATE TABLE tracks AS
	SELECT g AS id, ST_MakeLine(ST_MakePointM(x, y, t) ORDER BY t) AS traj
	FROM (SELECT g, t, 1000 * cos(g + t / 50.0) + 3 * t + 17 * g AS x, 1000 * sin(g * 1.3 + t / 40.0) + 5 * g AS y
		  FROM generate_series(1, 80) g, generate_series(0, 400) t) p
	GROUP BY g;
CREATE TABLE points AS
	SELECT ST_MakePoint(500 * sin(i * 0.001) * cos(i), 500 * sin(i * 0.001) * sin(i)) AS geom
	FROM generate_series(1, 200000) i;
CREATE TABLE fixes AS
	SELECT g % 50 AS object_id, '2020-06-04'::timestamptz + make_interval(secs => t * 10 + g % 7) AS t,
		ST_SetSRID(ST_MakePoint(100 * g + t * 3, 50 * g + sin(t) * 20), 32618) AS geom
	FROM generate_series(1, 300) g, generate_series(0, 200) t;
CREATE TABLE mesh AS
	SELECT ST_GeomFromText('TIN Z (' || string_agg(format('((%s %s 0,%s %s 1,%s %s 2,%s %s 0))',
		x, y, x + 1, y, x, y + 1, x, y), ',') || ')') AS geom
	FROM generate_series(0, 60) x, generate_series(0, 60) y;
ANALYZE;
});

# ------------------------------------------ every function through the service
# each pair: the function under geoacc.device = gpu (the service) and = cpu (this backend) to the same bits
my %same = (
	gpu_twed_matrix => q{SELECT a_id, b_id, distance FROM gpu_twed_matrix('SELECT id, v FROM series', NULL, 0.001, 1)},
	gpu_dp_simplify => q{SELECT id, ST_AsEWKB(gpu_dp_simplify(traj, 2.5) OVER ()) FROM tracks},
	gpu_density_raster =>
	  q{SELECT md5(gpu_density_raster(geom, ST_MakeEnvelope(-500, -500, 500, 500), 256, 256, 'gaussian', 5)::text) FROM points},
	gpu_segment_join => q{SELECT * FROM gpu_segment_join('SELECT id, traj FROM tracks', NULL, 25)},
	gpu_mesh_clip => q{SELECT ST_AsEWKB(gpu_mesh_clip(geom, ST_3DMakeBox(ST_MakePoint(3.5, 2.25, 0), ST_MakePoint(40.5, 33.7, 2)))) FROM mesh},
	gpu_encounters => q{SELECT * FROM gpu_encounters('SELECT id, traj FROM tracks', NULL, 25, max_gap => '5 seconds')},
	gpu_stops => q{SELECT * FROM gpu_stops('SELECT id, traj FROM tracks', 60, '20 seconds')},
	gpu_zone_visits =>
	  q{SELECT * FROM gpu_zone_visits('SELECT id, traj FROM tracks', 'SELECT g, ST_Buffer(ST_MakePoint(200 * g, 100 * g), 300) FROM generate_series(1, 20) g')},
	gpu_mesh_tileset => q{SELECT path, md5(content) FROM gpu_mesh_tileset((SELECT geom FROM mesh), 3)},
	gpu_make_trajectories =>
	  q{SELECT object_id, part, ST_AsEWKB(trajectory) FROM gpu_make_trajectories('SELECT object_id, t, geom FROM fixes', '5 min', 1.0)},
);
my $calls_before = service('calls');
for my $f (sort keys %same)
{
	my $sql = $same{$f};
	my $differ = $node->safe_psql(
		'postgres', qq{
SET geoacc.device = cpu;
CREATE TEMP TABLE on_cpu AS $sql;
SET geoacc.device = gpu;
CREATE TEMP TABLE on_service AS $sql;
SELECT (SELECT count(*) FROM on_cpu) || ' ' ||
	(SELECT count(*) FROM ((TABLE on_cpu EXCEPT ALL TABLE on_service) UNION ALL (TABLE on_service EXCEPT ALL TABLE on_cpu)) d);
});
	my ($rows, $diff) = split / /, $differ;
	ok($rows > 0 && $diff == 0, "$f through the service equals the CPU path ($rows rows, $diff differ)");
}
cmp_ok(service('calls'), '>=', $calls_before + scalar(keys %same), 'the service ran the calls');

# parallel workers hand their work to the service too
my $parallel = $node->safe_psql(
	'postgres', q{
SET geoacc.device = cpu;
CREATE TEMP TABLE r_cpu AS
	SELECT gpu_density_raster(geom, ST_MakeEnvelope(-500, -500, 500, 500), 128, 128, 'gaussian', 3) AS r FROM points;
SET geoacc.device = gpu;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 4;
CREATE TEMP TABLE r_service AS
	SELECT gpu_density_raster(geom, ST_MakeEnvelope(-500, -500, 500, 500), 128, 128, 'gaussian', 3) AS r FROM points;
SELECT (SELECT r FROM r_cpu) = (SELECT r FROM r_service);
});
is($parallel, 't', 'the density raster with parallel workers through the service equals the CPU path');
my $plan = $node->safe_psql(
	'postgres', q{
SET geoacc.device = gpu;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 4;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT gpu_density_raster(geom, ST_MakeEnvelope(-500, -500, 500, 500), 128, 128, 'gaussian', 3) FROM points;
});
like($plan, qr/Workers Launched: [1-9]/, 'the plan launched parallel workers');

# ------------------------------------------------------------------- cancel
my $long = q{SELECT count(*) FROM gpu_twed_matrix('SELECT id, v FROM long_series', NULL, 0.001, 1)};
my $start = time;
my ($rc, $out, $err) = $node->psql('postgres', "SET geoacc.device = gpu; SET statement_timeout = '700ms'; $long");
my $took = time - $start;
like($err, qr/canceling statement due to statement timeout/, 'statement_timeout cancels a call in the service');
cmp_ok($took, '<', 0.7 + 1.0, sprintf('within 1 s of the timeout (%.2f s in all)', $took));
wait_true("SELECT running = 0 AND queued = 0 FROM geoacc_service()", 'the cancelled work stopped in the service');

my $session = $node->background_psql('postgres', on_error_stop => 0);
my $session_pid = $session->query_safe('SELECT pg_backend_pid()');
$session->query_until(qr/started/, "SET geoacc.device = gpu;\n\\echo started\n$long;\n");
wait_true("SELECT running = 1 FROM geoacc_service()", 'a call runs in the service');
$start = time;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($session_pid)");
wait_true("SELECT running = 0 FROM geoacc_service()", 'pg_cancel_backend stops it');
cmp_ok(time - $start, '<', 1.5, 'within 1 s');
like($session->query('SELECT 1'), qr/^1$/m, 'the cancelled session goes on');
$session->quit;

# two device processes: a long call does not hold up a short one
$session = $node->background_psql('postgres', on_error_stop => 0);
$session_pid = $session->query_safe('SELECT pg_backend_pid()');
$session->query_until(qr/started/, "SET geoacc.device = gpu;\n\\echo started\n$long;\n");
wait_true("SELECT running = 1 FROM geoacc_service()", 'a long call runs in the service');
$start = time;
is($node->safe_psql('postgres', "SET geoacc.device = gpu; SELECT count(*) FROM gpu_twed_matrix('SELECT id, v FROM series', NULL, 0.001, 1)"),
	'1770', 'a short call runs beside it');
cmp_ok(time - $start, '<', 2, 'without waiting for the long one');
is(service('running'), '1', 'the long one still runs');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($session_pid)");
$session->quit;
wait_true("SELECT running = 0 FROM geoacc_service()", 'cancelled');

# ------------------------------------------------------------ caller death
$session = $node->background_psql('postgres', on_error_stop => 0);
$session_pid = $session->query_safe('SELECT pg_backend_pid()');
$session->query_until(qr/started/, "SET geoacc.device = gpu;\n\\echo started\n$long;\n");
wait_true("SELECT running = 1 FROM geoacc_service()", 'a call runs in the service');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($session_pid)");
wait_true("SELECT running = 0 AND memory_used = 0 FROM geoacc_service()",
	'a terminated caller leaves nothing in the service memory');
$session->{run}->finish;
is($node->safe_psql('postgres', "SET geoacc.device = gpu; SELECT count(*) FROM gpu_twed_matrix('SELECT id, v FROM series', NULL, 0.001, 1)"),
	'1770', 'the service serves the next call');

# ----------------------------------------------------------- service death
my $bystander = $node->background_psql('postgres');
my $bystander_pid = $bystander->query_safe('SELECT pg_backend_pid()');
my $starts = service('starts');
$session = $node->background_psql('postgres', on_error_stop => 0);
$session->query_until(qr/started/, "SET geoacc.device = gpu;\n\\echo started\n$long;\n");
wait_true("SELECT running = 1 FROM geoacc_service()", 'a call runs in the service');
my @device_pids = split /,/, service("array_to_string(pids, ',')");
kill 'KILL', @device_pids;
wait_true("SELECT starts = $starts + 2 AND cardinality(pids) = 2 AND NOT pids && '{" . join(',', @device_pids) . "}' FROM geoacc_service()",
	'the supervisor starts new device processes');
my $result = $session->query('SELECT 1');
like($session->{stderr}, qr/the geoacc service failed during the call/,
	'the caller under geoacc.device = gpu gets an ERROR');
$session->quit;
is($bystander->query_safe('SELECT pg_backend_pid()'), $bystander_pid, 'the server was not restarted');
$bystander->quit;
ok($node->log_contains("the device process \\(pid $device_pids[0]\\) was terminated by signal 9"),
	'the log says the device process died');
cmp_ok(service('lost_calls'), '>=', 1, 'geoacc_service() counts the lost call');
wait_true("SELECT memory_used = 0 FROM geoacc_service()", 'what the dead process took is freed');

# under auto the call runs on the CPU instead, to the same bits
$session = $node->background_psql('postgres', on_error_stop => 0);
$session->query_until(qr/started/,
	"SET geoacc.gpu_threshold = 0;\n\\echo started\nCREATE TABLE after_death AS SELECT a_id, b_id, distance FROM gpu_twed_matrix('SELECT id, v FROM long_series WHERE id <= 50', NULL, 0.001, 1);\n");
wait_true("SELECT running = 1 FROM geoacc_service()", 'a call runs in the service');
kill 'KILL', split /,/, service("array_to_string(pids, ',')");
$session->query_safe('SELECT 1');
$session->quit;
is($node->safe_psql('postgres', q{
SET geoacc.device = cpu;
CREATE TEMP TABLE reference AS SELECT a_id, b_id, distance FROM gpu_twed_matrix('SELECT id, v FROM long_series WHERE id <= 50', NULL, 0.001, 1);
SELECT count(*) FROM ((TABLE reference EXCEPT ALL TABLE after_death) UNION ALL (TABLE after_death EXCEPT ALL TABLE reference)) d;
}), '0', 'under geoacc.device = auto the call ran on the CPU to the same bits');
ok($node->log_contains('gpu_twed_matrix runs on the CPU after the GPU failed'), 'with a LOG line');

# ------------------------------------------------------- 16 sessions at once
wait_true("SELECT cardinality(pids) = 2 FROM geoacc_service()", 'the device processes are back');
$node->safe_psql('postgres', q{
SET geoacc.device = cpu;
CREATE TABLE expected AS
	SELECT s, md5(string_agg(a_id || ' ' || b_id || ' ' || distance::text, ',' ORDER BY a_id, b_id)) AS h
	FROM generate_series(1, 16) s,
		LATERAL gpu_twed_matrix(format('SELECT id, v FROM series WHERE id %% 16 <> %s', s - 1), NULL, 0.001, s) m
	GROUP BY s;
CREATE TABLE got (s int, h text);
});
my @sessions;
for my $s (1 .. 16)
{
	my $b = $node->background_psql('postgres', on_error_stop => 0);
	$b->query_until(qr/started/, "SET geoacc.device = gpu;\n\\echo started\n" .
		"INSERT INTO got SELECT $s, md5(string_agg(a_id || ' ' || b_id || ' ' || distance::text, ',' ORDER BY a_id, b_id)) " .
		"FROM gpu_twed_matrix(format('SELECT id, v FROM series WHERE id %% 16 <> %s', $s - 1), NULL, 0.001, $s) m;\n");
	push @sessions, $b;
}
$_->quit for @sessions;
is($node->safe_psql('postgres', 'SELECT count(*) FROM got JOIN expected USING (s, h)'), '16',
	'16 sessions at once: every result equals the CPU path');
wait_true("SELECT running = 0 AND queued = 0 AND memory_used = 0 FROM geoacc_service()",
	'nothing is left queued, running or held');

# ------------------------------------------------- the memory after a death
# a device process killed while it holds the service memory's lock can leave a change half made: the next
# process to take the lock rebuilds the free list and the links from the blocks, and the calls go on
$node->safe_psql('postgres',
	"CREATE FUNCTION geoacc_test_service_repair() RETURNS boolean AS 'geoacc' LANGUAGE C STRICT");
is($node->safe_psql('postgres', 'SELECT geoacc_test_service_repair()'), 't',
	'the service memory is rebuilt from its blocks');
my $after_repair = $node->safe_psql(
	'postgres', qq{
SET geoacc.device = cpu;
CREATE TEMP TABLE on_cpu AS $same{gpu_segment_join};
SET geoacc.device = gpu;
CREATE TEMP TABLE on_service AS $same{gpu_segment_join};
SELECT count(*) FROM ((TABLE on_cpu EXCEPT ALL TABLE on_service) UNION ALL (TABLE on_service EXCEPT ALL TABLE on_cpu)) d;
});
is($after_repair, '0', 'and serves calls afterwards, to the same bits');
wait_true('SELECT memory_used = 0 FROM geoacc_service()', 'leaving nothing held');

# --------------------------------------------------------------- snapshots
# a snapshot stays in the service memory when the device processes die; a restart of the server empties that
# memory, and the snapshot's first use builds it again from its query, to the same bits
$node->safe_psql('postgres', q{
CREATE TABLE snap_points AS
	SELECT i AS id, ST_SetSRID(ST_MakePoint(i * 10, (i * 7919) % 1000), 3857) AS geom FROM generate_series(1, 1000) i;
SELECT geoacc_snapshot_create('points', 'SELECT id, geom FROM snap_points');
CREATE TABLE snap_expected AS
	SELECT gpu_density_raster(geom, 'SRID=3857;POLYGON((0 0,0 1000,10000 1000,10000 0,0 0))'::geometry, 100, 10) AS r
	FROM snap_points;
});
my $snap_same = "SET geoacc.device = gpu; SELECT geoacc_snapshot_density('points', 'SRID=3857;POLYGON((0 0,0 1000,10000 1000,10000 0,0 0))', 100, 10) = r FROM snap_expected";
cmp_ok(service('memory_used'), '>', 0, 'a snapshot is in the service memory');
is($node->safe_psql('postgres', $snap_same), 't', 'a raster of the snapshot, run by the service');
cmp_ok(service('snapshot_copies'), '>', 0, 'the device process that ran it keeps the snapshot prepared');
kill 'KILL', split /,/, service("array_to_string(pids, ',')");
wait_true("SELECT cardinality(pids) = 2 AND starts > $starts + 4 FROM geoacc_service()", 'the device processes are back');
is(service('snapshot_copies'), '0', 'what they kept went with them');
is($node->safe_psql('postgres', 'SELECT built IS NOT NULL FROM geoacc_snapshots()'), 't',
	'the snapshot outlives the device processes');
is($node->safe_psql('postgres', $snap_same), 't', 'and reads to the aggregate\'s bits');
is($node->safe_psql('postgres', 'SELECT device_copies > 0 FROM geoacc_snapshots()'), 't',
	'a new device process prepares it again');
my $built = $node->safe_psql('postgres', 'SELECT built FROM geoacc_snapshots()');
$node->restart;
is($node->safe_psql('postgres', 'SELECT built IS NULL FROM geoacc_snapshots()'), 't',
	'after a restart the service memory holds no snapshot');
is($node->safe_psql('postgres', $snap_same), 't', 'its first use builds it again from its query, to the same bits');
is($node->safe_psql('postgres', "SELECT built > '$built' FROM geoacc_snapshots()"), 't',
	'geoacc_snapshots() shows it built again');
$node->safe_psql('postgres', "SELECT geoacc_snapshot_drop('points')");
wait_true('SELECT memory_used = 0 AND snapshot_copies = 0 FROM geoacc_service()',
	'a dropped snapshot leaves nothing in the service memory or the device processes');

$node->stop;
done_testing();
