-- The audit log of serve mode: one JSON event per row, read back in time
-- order (Unix nanoseconds, then insertion order for events of one instant).
CREATE TABLE audit (
	seq   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at_ns bigint NOT NULL,
	event text NOT NULL
);
CREATE INDEX audit_at ON audit (at_ns, seq);
