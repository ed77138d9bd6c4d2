-- Records per (namespace, status, kind), kept in the same transaction as
-- every write, so browse totals and the explore counts of kind, status and
-- namespace under a reach read a few hundred rows instead of every record.
CREATE TABLE record_counts (
	ns       text COLLATE "C" NOT NULL,
	last_svc smallint NOT NULL,
	status   text COLLATE "C" NOT NULL,
	kind     text COLLATE "C" NOT NULL,
	n        bigint NOT NULL,
	PRIMARY KEY (ns, status, kind)
);
INSERT INTO record_counts (ns, last_svc, status, kind, n)
	SELECT ns, last_svc, status, kind, count(*) FROM records GROUP BY ns, last_svc, status, kind;
CREATE INDEX records_expires ON records (expires_ms) WHERE expires_ms IS NOT NULL;
