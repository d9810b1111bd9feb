-- constraint violations: names, DETAIL, as PostgreSQL reports them
CREATE TABLE parents (id integer PRIMARY KEY, code text UNIQUE, qty integer NOT NULL DEFAULT 0,
                      price numeric(10,2) CHECK (price > 0));
CREATE TABLE children (id integer PRIMARY KEY, parent_id integer REFERENCES parents (id));
CREATE TABLE named (k integer, v text, CONSTRAINT named_pk PRIMARY KEY (k),
                    CONSTRAINT short_v CHECK (length(v) < 4));
INSERT INTO parents (id, code) VALUES (1, 'a');
INSERT INTO parents (id, code) VALUES (1, 'b');
INSERT INTO parents (id, code) VALUES (2, 'a');
INSERT INTO parents (id, code) VALUES (3, 'c'), (3, 'd');
INSERT INTO parents (id, qty) VALUES (4, NULL);
INSERT INTO parents (id, price) VALUES (5, -1);
UPDATE parents SET id = 1 WHERE id = 1;
INSERT INTO parents (id, code) VALUES (6, 'f');
UPDATE parents SET id = 1 WHERE id = 6;
INSERT INTO parents (id, code) SELECT 7, 'a';
INSERT INTO parents (id, code) VALUES (1, 'z') ON CONFLICT (code) DO NOTHING;
INSERT INTO children VALUES (1, 99);
INSERT INTO children VALUES (1, 1);
DELETE FROM parents WHERE id = 1;
DROP TABLE parents;
INSERT INTO named VALUES (1, 'ok');
INSERT INTO named VALUES (1, 'no');
INSERT INTO named VALUES (2, 'toolong');
SELECT id, code FROM parents ORDER BY id;
COPY children FROM stdin;
10	1
10	1
\.
COPY parents (id, code, qty) FROM stdin;
20	t	1
21	u	\N
\.
COPY parents (id, price) FROM stdin (FORMAT csv);
22,5
23,-5
\.
SELECT count(*) FROM children;
