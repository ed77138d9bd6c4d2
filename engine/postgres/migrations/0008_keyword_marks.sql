-- Repeat markers (text.go): from this step a record's tsvector also holds,
-- without positions, the lexeme term+'+' for each term it holds at two
-- positions or more, and kw is true. Keyword ranking then ranks only the
-- matches that can score above one occurrence of one term (search.go). Rows
-- written before this step (or by an older mnemo while it ran) hold NULL
-- and are ranked the old way, every match read, until the engine fills
-- them in the background after open, a batch at a time.
ALTER TABLE records ADD COLUMN kw boolean;
CREATE INDEX records_no_kw ON records (id) WHERE kw IS NULL;
