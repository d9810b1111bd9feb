-- syntax errors, with PostgreSQL's caret
SELEC 1;
SELECT 1 +;
SELECT * FROM;
SELECT 'a' 'b';
CREATE TABLE (a int);
SELECT * FROM t WHERE a = = 1;
INSERT INTO;
UPDATE t SET;
SELECT 1
  FROM
  WHERE;
SELECT 1 FROM (SELECT 2;
SELECT "unterminated FROM x;
SELECT 1 +
