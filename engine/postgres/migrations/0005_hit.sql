-- A hit's text and metadata in a compact binary form (hit.go), kept in the
-- row (compressed when large), so pages and rankings read neither the item
-- out of line nor JSON. Rows written before this step hold NULL and are
-- read from their item; the full-text vector moves into the row as well, so
-- ranking reads it with the row (both apply to rows written from now on).
ALTER TABLE records ADD COLUMN hit bytea;
ALTER TABLE records ALTER COLUMN hit SET STORAGE MAIN;
ALTER TABLE records ALTER COLUMN tsv SET STORAGE MAIN;
-- The rows still to fill in (none once every row has its hit): the engine
-- fills them in the background after open, a batch at a time.
CREATE INDEX records_no_hit ON records (id) WHERE hit IS NULL;
