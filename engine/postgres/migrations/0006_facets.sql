-- Every facet's counts at the root reach (every record outside a service
-- sandbox: last_svc < 0), so explore at the root reads the top buckets from
-- an index instead of grouping every record. facet_values holds, for facet
-- code f (facet.go), each value's record count (tags: records holding the
-- tag), and under -f the facet's head: 'missing' (records without a value)
-- and 'values' (values with a count above zero).
--
-- A statement-level trigger keeps the counts in the same transaction as
-- every write, whichever process (or mnemo version) makes it. Its rows are
-- locked in (facet, value) order, heads after values, and each write
-- transaction runs one statement on records, so writers never deadlock.
CREATE TABLE facet_values (
	facet smallint NOT NULL,
	value text COLLATE "C" NOT NULL,
	n     bigint NOT NULL,
	PRIMARY KEY (facet, value)
);
CREATE INDEX facet_values_top ON facet_values (facet, n DESC, value);

-- The (facet, value) pairs a record counts in; a NULL value is a missing one.
CREATE FUNCTION facet_pairs(r records) RETURNS TABLE (f smallint, v text)
LANGUAGE sql IMMUTABLE SET search_path FROM CURRENT AS $$
	SELECT x.f, x.v FROM (VALUES
		(1::smallint, r.source_kind), (2::smallint, r.source_id), (3::smallint, r.workspace),
		(4::smallint, r.folder), (5::smallint, r.file_path), (6::smallint, r.language),
		(7::smallint, r.repo), (8::smallint, r.url), (9::smallint, r.thread_id),
		(10::smallint, r.agent_id), (11::smallint, r.tool_call)) AS x(f, v)
	UNION ALL
	SELECT 12::smallint, t FROM unnest(CASE WHEN cardinality(r.tags) = 0 THEN ARRAY[NULL]::text[] ELSE r.tags END) AS t
$$;

-- facet_apply adds the deltas of (facet, value) pairs: the values first, in
-- key order, then the heads (missing, and values that reached or left zero).
CREATE FUNCTION facet_apply(fs smallint[], vs text[], ds bigint[]) RETURNS void
LANGUAGE sql SET search_path FROM CURRENT AS $$
	WITH d AS (
		SELECT u.f, u.v, sum(u.dl)::bigint AS dl FROM unnest(fs, vs, ds) AS u(f, v, dl)
		GROUP BY u.f, u.v HAVING sum(u.dl) <> 0
	), up AS (
		INSERT INTO facet_values AS t (facet, value, n)
		SELECT d.f, d.v, d.dl FROM d WHERE d.v IS NOT NULL ORDER BY d.f, d.v
		ON CONFLICT (facet, value) DO UPDATE SET n = t.n + excluded.n
		RETURNING t.facet, t.value, t.n
	), h AS (
		SELECT -d.f AS f, x.k AS v, sum(x.dl)::bigint AS dl
		FROM d LEFT JOIN up ON up.facet = d.f AND up.value = d.v
		CROSS JOIN LATERAL (VALUES
			('missing', CASE WHEN d.v IS NULL THEN d.dl ELSE 0 END),
			('values', CASE WHEN d.v IS NULL THEN 0
				WHEN up.n > 0 AND up.n - d.dl <= 0 THEN 1
				WHEN up.n <= 0 AND up.n - d.dl > 0 THEN -1 ELSE 0 END)) AS x(k, dl)
		GROUP BY 1, 2 HAVING sum(x.dl) <> 0
	)
	INSERT INTO facet_values AS t (facet, value, n)
	SELECT h.f, h.v, h.dl FROM h ORDER BY h.f, h.v
	ON CONFLICT (facet, value) DO UPDATE SET n = t.n + excluded.n
$$;

CREATE FUNCTION records_facets_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	PERFORM facet_apply(array_agg(p.f), array_agg(p.v), array_agg(1::bigint))
		FROM new_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0;
	RETURN NULL;
END $$;

CREATE FUNCTION records_facets_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	PERFORM facet_apply(array_agg(p.f), array_agg(p.v), array_agg(-1::bigint))
		FROM old_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0;
	RETURN NULL;
END $$;

-- Records change only their status, times and successor in place, which
-- leaves every count as it is; an update of anything else is counted too.
CREATE FUNCTION records_facets_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	PERFORM facet_apply(array_agg(x.f), array_agg(x.v), array_agg(x.dl)) FROM (
		SELECT p.f, p.v, -1::bigint AS dl FROM old_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0
		UNION ALL
		SELECT p.f, p.v, 1::bigint FROM new_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0) x;
	RETURN NULL;
END $$;

CREATE TRIGGER records_facets_insert AFTER INSERT ON records
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION records_facets_insert();
CREATE TRIGGER records_facets_delete AFTER DELETE ON records
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION records_facets_delete();
CREATE TRIGGER records_facets_update AFTER UPDATE ON records
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION records_facets_update();

-- The records already held (the table is locked by the triggers' creation
-- until this step commits, so no write is counted twice or missed).
INSERT INTO facet_values (facet, value, n)
	SELECT p.f, p.v, count(*) FROM records r CROSS JOIN LATERAL facet_pairs(r) p
	WHERE r.last_svc < 0 AND p.v IS NOT NULL GROUP BY p.f, p.v;
INSERT INTO facet_values (facet, value, n)
	SELECT -p.f, 'missing', count(*) FROM records r CROSS JOIN LATERAL facet_pairs(r) p
	WHERE r.last_svc < 0 AND p.v IS NULL GROUP BY p.f;
INSERT INTO facet_values (facet, value, n)
	SELECT -facet, 'values', count(*) FROM facet_values WHERE facet > 0 GROUP BY facet;
