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
) WITH (toast_tuple_target = 512);
-- The bulky columns (the item, its folded text, its tsvector) go out of line
-- uncompressed, and the small ones stay in the row uncompressed unless a row
-- cannot fit otherwise: groupings, sorts and filters read narrow rows without
-- decompressing anything, and only a page's rows fetch their item.
ALTER TABLE records
	ALTER COLUMN item SET STORAGE EXTERNAL,
	ALTER COLUMN folded SET STORAGE EXTERNAL,
	ALTER COLUMN tsv SET STORAGE EXTERNAL,
	ALTER COLUMN id SET STORAGE MAIN,
	ALTER COLUMN kind SET STORAGE MAIN,
	ALTER COLUMN status SET STORAGE MAIN,
	ALTER COLUMN superseded_by SET STORAGE MAIN,
	ALTER COLUMN ns SET STORAGE MAIN,
	ALTER COLUMN workspace SET STORAGE MAIN,
	ALTER COLUMN folder SET STORAGE MAIN,
	ALTER COLUMN file_path SET STORAGE MAIN,
	ALTER COLUMN language SET STORAGE MAIN,
	ALTER COLUMN repo SET STORAGE MAIN,
	ALTER COLUMN commit_id SET STORAGE MAIN,
	ALTER COLUMN url SET STORAGE MAIN,
	ALTER COLUMN thread_id SET STORAGE MAIN,
	ALTER COLUMN agent_id SET STORAGE MAIN,
	ALTER COLUMN source_id SET STORAGE MAIN,
	ALTER COLUMN source_kind SET STORAGE MAIN,
	ALTER COLUMN tool_call SET STORAGE MAIN,
	ALTER COLUMN tags SET STORAGE MAIN;
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
