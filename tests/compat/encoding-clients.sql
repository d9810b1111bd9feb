-- client encodings other than UTF8: this file is UTF-8, so under \encoding LATIN1 each
-- of its UTF-8 bytes is a LATIN1 character ('é' is two of them) and comes back as the same byte
\encoding LATIN1
SHOW client_encoding;
SELECT 'café' AS v, length('café') AS n, upper('café') AS u;
CREATE TABLE enc (id int, v text);
INSERT INTO enc VALUES (1, 'naïve'), (2, '€uro'), (3, 'Ωmega');
SELECT id, v, length(v) AS n FROM enc ORDER BY id;
SELECT v AS "é" FROM enc WHERE v LIKE '%ï%';
SELECT chr(233) = 'é' AS same, chr(195) || chr(169) = 'é' AS bytes_as_latin1;
SELECT chr(8364);
SELECT id, chr(8364) FROM enc ORDER BY id;
SELECT * FROM "tablé";
COPY enc TO STDOUT;
COPY enc TO STDOUT (FORMAT csv, HEADER);
COPY enc FROM STDIN;
4	über
\.
SELECT v FROM enc WHERE id = 4;
\encoding WIN1252
SHOW client_encoding;
SELECT 'Á' AS a_acute;
SELECT 'ü' AS u_umlaut, length('ü') AS n;
SELECT chr(129);
SET client_encoding = 'no_such_encoding';
SET client_encoding TO 'MULE_INTERNAL';
SET NAMES 'ISO-8859-15';
SELECT pg_client_encoding();
SHOW client_encoding;
SET client_encoding TO unicode;
SHOW client_encoding;
SET client_encoding TO 'UNICODE';
SHOW client_encoding;
SET client_encoding = 'KOI8';
SHOW client_encoding;
RESET client_encoding;
SHOW client_encoding;
SELECT pg_client_encoding();
