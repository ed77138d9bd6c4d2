-- record_facets is a narrow copy of every record's filter and facet
-- columns (no text, item, hit or tsvector): explore under a filter narrower
-- than the root groups these rows, about a seventh of the records table's
-- bytes. The facet trigger functions of step 6 keep it, in the same
-- statement as the counts. Writers wait while this step runs (the lock is
-- taken first), so the copy misses no write.
LOCK TABLE records IN SHARE ROW EXCLUSIVE MODE;
CREATE TABLE record_facets (
	id          text COLLATE "C" PRIMARY KEY,
	ns          text COLLATE "C" NOT NULL,
	last_svc    smallint NOT NULL,
	status      text COLLATE "C" NOT NULL,
	kind        text COLLATE "C" NOT NULL,
	workspace   text COLLATE "C",
	folder      text COLLATE "C",
	file_path   text COLLATE "C",
	language    text COLLATE "C",
	repo        text COLLATE "C",
	commit_id   text COLLATE "C",
	url         text COLLATE "C",
	thread_id   text COLLATE "C",
	agent_id    text COLLATE "C",
	source_id   text COLLATE "C",
	source_kind text COLLATE "C" NOT NULL,
	tool_call   text COLLATE "C",
	turn_first  bigint,
	turn_last   bigint,
	tags        text[] COLLATE "C" NOT NULL,
	observed_at timestamptz,
	observed_ns integer
);
CREATE INDEX record_facets_ns ON record_facets (ns);
CREATE INDEX record_facets_tags ON record_facets USING gin (tags);

CREATE OR REPLACE FUNCTION records_facets_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	INSERT INTO record_facets (id, ns, last_svc, status, kind, workspace, folder, file_path, language, repo,
		commit_id, url, thread_id, agent_id, source_id, source_kind, tool_call, turn_first, turn_last, tags,
		observed_at, observed_ns)
	SELECT id, ns, last_svc, status, kind, workspace, folder, file_path, language, repo,
		commit_id, url, thread_id, agent_id, source_id, source_kind, tool_call, turn_first, turn_last, tags,
		observed_at, observed_ns FROM new_rows ORDER BY id;
	PERFORM facet_apply(array_agg(p.f), array_agg(p.v), array_agg(1::bigint))
		FROM new_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0;
	RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION records_facets_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
	DELETE FROM record_facets f USING old_rows o WHERE f.id = o.id;
	PERFORM facet_apply(array_agg(p.f), array_agg(p.v), array_agg(-1::bigint))
		FROM old_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0;
	RETURN NULL;
END $$;

-- Records change only their status, times and successor in place, which
-- leaves every count as it is; an update of anything else is counted too.
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
	PERFORM facet_apply(array_agg(x.f), array_agg(x.v), array_agg(x.dl)) FROM (
		SELECT p.f, p.v, -1::bigint AS dl FROM old_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0
		UNION ALL
		SELECT p.f, p.v, 1::bigint FROM new_rows r CROSS JOIN LATERAL facet_pairs(r) p WHERE r.last_svc < 0) x;
	RETURN NULL;
END $$;

-- The records already held.
INSERT INTO record_facets (id, ns, last_svc, status, kind, workspace, folder, file_path, language, repo,
	commit_id, url, thread_id, agent_id, source_id, source_kind, tool_call, turn_first, turn_last, tags,
	observed_at, observed_ns)
SELECT id, ns, last_svc, status, kind, workspace, folder, file_path, language, repo,
	commit_id, url, thread_id, agent_id, source_id, source_kind, tool_call, turn_first, turn_last, tags,
	observed_at, observed_ns FROM records;
