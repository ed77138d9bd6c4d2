-- The change feed. change_head hands out seqs: every mutating transaction
-- bumps it last, holding its row lock until commit, so seqs are given out in
-- commit order and a reader never sees a later seq before an earlier one (no
-- gap ever becomes visible, and none is left by a rollback). A change holds
-- no content: op, id, namespace, status and when.
CREATE TABLE change_head (
	one    boolean PRIMARY KEY DEFAULT true CHECK (one),
	seq    bigint NOT NULL,
	pruned bigint NOT NULL
);
INSERT INTO change_head (seq, pruned) VALUES (0, 0);
CREATE TABLE changes (
	seq    bigint PRIMARY KEY,
	at_ms  bigint NOT NULL,
	op     text COLLATE "C" NOT NULL,
	id     text COLLATE "C" NOT NULL,
	ns     text COLLATE "C" NOT NULL,
	status text COLLATE "C" NOT NULL
);
