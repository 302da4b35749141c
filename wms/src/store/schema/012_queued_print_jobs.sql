-- A spooler reads its printer's queued jobs after every change; printed
-- jobs pile up, so only the queued ones are indexed for it.
CREATE INDEX print_jobs_queued ON print_jobs (printer_id, created_at, id) WHERE status = 'queued';
