-- Repeat markers (text.go): from this step a record's tsvector also holds,
-- without positions, the lexeme term+'+' for each term it holds at two
-- positions or more, and kw is true. Keyword ranking then ranks only the
-- matches that can score above one occurrence of one term (search.go). Rows
-- written before this step (or by an older mnemo while it ran) hold NULL
-- and are ranked the old way, every match read, until the engine fills
-- them in the background after open, a batch at a time.
ALTER TABLE records ADD COLUMN kw boolean;
CREATE INDEX records_no_kw ON records (id) WHERE kw IS NULL;
-- The status index selects no useful share of the records (most are active)
-- and, before a freshly loaded table has its statistics, led the planner to
-- AND a scan of all of it into every keyword ranking; pages with a status
-- filter walk their order's index, totals read record_counts.
DROP INDEX records_status;
