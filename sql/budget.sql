-- The settings of the GPU memory budget that the sessions of a server share (the budget itself needs
-- geoacc in shared_preload_libraries: make installcheck-preloaded runs sql/budget_preloaded.sql there).
LOAD 'geoacc';

SHOW geoacc.gpu_memory_total;
SHOW geoacc.gpu_memory_wait;

-- geoacc.gpu_memory_total is the server's: postgresql.conf or ALTER SYSTEM, then a reload
SET geoacc.gpu_memory_total = '4GB';
-- ALTER SYSTEM checks a value before it writes it
ALTER SYSTEM SET geoacc.gpu_memory_total = 0;
ALTER SYSTEM SET geoacc.gpu_memory_total = '100kB';
ALTER SYSTEM SET geoacc.gpu_memory_total = -2;
ALTER SYSTEM SET geoacc.gpu_memory_total = 'lots';
ALTER SYSTEM SET geoacc.gpu_memory_total = '4GB';
ALTER SYSTEM RESET geoacc.gpu_memory_total;

-- geoacc.gpu_memory_wait: any session, milliseconds or a time unit, 0 for no wait
SET geoacc.gpu_memory_wait = -1;
SET geoacc.gpu_memory_wait = 'a while';
SET geoacc.gpu_memory_wait = '2min';
SHOW geoacc.gpu_memory_wait;
SET geoacc.gpu_memory_wait = 0;
SHOW geoacc.gpu_memory_wait;
RESET geoacc.gpu_memory_wait;

-- the budget of this session's GPU, with geoacc preloaded and a GPU; NULL otherwise
SELECT (gpu_memory_total IS NULL) = NOT (gpu_usable AND current_setting('shared_preload_libraries') ~ 'geoacc')
		AS total_iff_budget,
	(gpu_memory_reserved IS NULL) = (gpu_memory_total IS NULL) AS reserved_iff_budget,
	gpu_memory_reserved >= 0 IS NOT FALSE AS reserved_ok,
	gpu_memory_limit <= gpu_memory_total IS NOT FALSE AS call_within_budget
FROM geoacc_status();
