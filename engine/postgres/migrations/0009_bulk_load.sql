-- Bulk loads (bulk.go). While mnemo_meta holds the row 'bulk_load', a bulk
-- load runs (or was cut short, and the next open finishes it): the keyword
-- and trigram indexes are dropped, so each record costs a heap row and a few
-- b-tree entries instead of ~320 GIN entries, and the facet counts are not
-- kept (explore at the root groups record_facets instead, which the triggers
-- still keep). The load's end builds both indexes and takes the counts from
-- record_facets in one transaction that also deletes the row, so a reader
-- sees either the bulk state or a store whose indexes and counts are whole.
-- Writers from every process skip the counts while the row exists: the
-- state only changes under a table lock that waits for every writer.
CREATE OR REPLACE FUNCTION records_facets_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	INSERT INTO record_facets (id, ns, last_svc, status, kind, workspace, folder, file_path, language, repo,
		commit_id, url, thread_id, agent_id, source_id, source_kind, tool_call, turn_first, turn_last, tags,
		observed_at, observed_ns)
	SELECT id, ns, last_svc, status, kind, workspace, folder, file_path, language, repo,
		commit_id, url, thread_id, agent_id, source_id, source_kind, tool_call, turn_first, turn_last, tags,
		observed_at, observed_ns FROM new_rows ORDER BY id;
	IF NOT EXISTS (SELECT 1 FROM mnemo_meta WHERE key = 'bulk_load') THEN
		PERFORM facet_apply(array_agg(p.f), array_agg(p.v), array_agg(1::bigint))
			FROM new_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0;
	END IF;
	RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION records_facets_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	DELETE FROM record_facets f USING old_rows o WHERE f.id = o.id;
	IF NOT EXISTS (SELECT 1 FROM mnemo_meta WHERE key = 'bulk_load') THEN
		PERFORM facet_apply(array_agg(p.f), array_agg(p.v), array_agg(-1::bigint))
			FROM old_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0;
	END IF;
	RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION records_facets_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	UPDATE record_facets f SET ns = r.ns, last_svc = r.last_svc, status = r.status, kind = r.kind,
		workspace = r.workspace, folder = r.folder, file_path = r.file_path, language = r.language,
		repo = r.repo, commit_id = r.commit_id, url = r.url, thread_id = r.thread_id, agent_id = r.agent_id,
		source_id = r.source_id, source_kind = r.source_kind, tool_call = r.tool_call,
		turn_first = r.turn_first, turn_last = r.turn_last, tags = r.tags, observed_at = r.observed_at,
		observed_ns = r.observed_ns
	FROM new_rows r WHERE f.id = r.id AND (f.ns, f.last_svc, f.status, f.kind, f.workspace, f.folder,
		f.file_path, f.language, f.repo, f.commit_id, f.url, f.thread_id, f.agent_id, f.source_id,
		f.source_kind, f.tool_call, f.turn_first, f.turn_last, f.tags, f.observed_at, f.observed_ns)
		IS DISTINCT FROM (r.ns, r.last_svc, r.status, r.kind, r.workspace, r.folder,
		r.file_path, r.language, r.repo, r.commit_id, r.url, r.thread_id, r.agent_id, r.source_id,
		r.source_kind, r.tool_call, r.turn_first, r.turn_last, r.tags, r.observed_at, r.observed_ns);
	IF NOT EXISTS (SELECT 1 FROM mnemo_meta WHERE key = 'bulk_load') THEN
		PERFORM facet_apply(array_agg(x.f), array_agg(x.v), array_agg(x.dl)) FROM (
			SELECT p.f, p.v, -1::bigint AS dl FROM old_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0
			UNION ALL
			SELECT p.f, p.v, 1::bigint FROM new_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0) x;
	END IF;
	RETURN NULL;
END $$;

-- facet_pairs without its SET clause, so the planner inlines it into the
-- triggers' statements (a function with SET is called row by row: 40 µs a
-- record against 14). It names no table, so the search path does not matter.
CREATE OR REPLACE FUNCTION facet_pairs(r records) RETURNS TABLE (f smallint, v text)
LANGUAGE sql IMMUTABLE AS $$
	SELECT x.f, x.v FROM (VALUES
		(1::smallint, r.source_kind), (2::smallint, r.source_id), (3::smallint, r.workspace),
		(4::smallint, r.folder), (5::smallint, r.file_path), (6::smallint, r.language),
		(7::smallint, r.repo), (8::smallint, r.url), (9::smallint, r.thread_id),
		(10::smallint, r.agent_id), (11::smallint, r.tool_call)) AS x(f, v)
	UNION ALL
	SELECT 12::smallint, t FROM unnest(CASE WHEN cardinality(r.tags) = 0 THEN ARRAY[NULL]::text[] ELSE r.tags END) AS t
$$;
