-- One row per record. Text columns that sort or compare use the C collation,
-- so their order is Go's byte order (the contract's).
CREATE TABLE records (
	seq          bigint GENERATED ALWAYS AS IDENTITY,
	id           text COLLATE "C" PRIMARY KEY,
	kind         text COLLATE "C" NOT NULL,
	status       text COLLATE "C" NOT NULL,
	created_ms   bigint NOT NULL,
	updated_ms   bigint NOT NULL,
	expires_ms   bigint,
	superseded_by text COLLATE "C",
	ns           text COLLATE "C" NOT NULL,
	-- the index of the namespace's last service segment, -1 without one:
	-- a reach with descendants below depth d admits it when last_svc < d.
	last_svc     smallint NOT NULL,
	workspace    text COLLATE "C",
	folder       text COLLATE "C",
	file_path    text COLLATE "C",
	language     text COLLATE "C",
	repo         text COLLATE "C",
	commit_id    text COLLATE "C",
	url          text COLLATE "C",
	thread_id    text COLLATE "C",
	agent_id     text COLLATE "C",
	source_id    text COLLATE "C",
	source_kind  text COLLATE "C" NOT NULL,
	tool_call    text COLLATE "C",
	turn_first   bigint,
	turn_last    bigint,
	tags         text[] COLLATE "C" NOT NULL DEFAULT '{}',
	observed_at  timestamptz,
	observed_ns  integer,
	observed_ms  bigint,
	confidence   real,
	item         text NOT NULL,
	folded       text NOT NULL,
	tsv          tsvector NOT NULL
) WITH (toast_tuple_target = 128);
-- The bulky columns (the item, its folded text, its tsvector) go out of line,
-- so counts, sorts and groupings scan narrow rows and only the rows of a page
-- fetch their item.
CREATE UNIQUE INDEX records_seq ON records (seq);
CREATE INDEX records_created ON records (created_ms DESC, id);
CREATE INDEX records_updated ON records (updated_ms DESC, id);
CREATE INDEX records_ns ON records (ns);
CREATE INDEX records_workspace ON records (workspace);
CREATE INDEX records_status ON records (status);
CREATE INDEX records_confidence ON records (confidence DESC NULLS LAST, id);
CREATE INDEX records_observed ON records (observed_ms DESC NULLS LAST, id);
CREATE INDEX records_tags ON records USING gin (tags);
CREATE INDEX records_tsv ON records USING gin (tsv);
CREATE INDEX records_folded ON records USING gin (folded {{trgm}}.gin_trgm_ops);
