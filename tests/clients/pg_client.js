// node-postgres (pg) against pgbarrier: one scenario per run, results printed one per line.
//
//   node pg_client.js HOST PORT DATABASE SCENARIO SUFFIX
//
// Every line is "key: value" (values JSON-encoded); a scenario that throws prints
// "FAILED: <code> <message>" and exits 1, so the test shows the client's error.
// Used by tests/functional/test_clients_external.py; pg comes from ./node_modules (npm ci).
'use strict';

const { Client } = require('pg');

const [host, port, database, scenario, suffix] = process.argv.slice(2);
const table = `node_${suffix}`;

function out(key, value) {
  console.log(`${key}: ${JSON.stringify(value)}`);
}

async function code(client, sql, values) {
  try {
    await client.query(sql, values);
    return 'none';
  } catch (err) {
    return err.code || `no code (${err.message})`;
  }
}

async function seed(client, rows) {
  await client.query(`CREATE TABLE ${table} (id INT, name TEXT)`);
  const values = [];
  for (let i = 1; i <= rows; i++) values.push(`(${i}, 'n${i}')`);
  await client.query(`INSERT INTO ${table} VALUES ${values.join(', ')}`);
}

const scenarios = {
  // $1 parameters: an unnamed statement per query, values sent as text with no type OIDs.
  async params(client) {
    await seed(client, 3);
    let res = await client.query(`SELECT id, name FROM ${table} WHERE id = $1`, [2]);
    out('by id', res.rows);
    res = await client.query(`SELECT name FROM ${table} WHERE name = $1 OR id > $2 ORDER BY id`,
      ['n1', 2]);
    out('by name or id', res.rows.map((r) => r.name));
    res = await client.query('SELECT $1::int + 1 AS n, $2::text AS s', [41, 'x']);
    out('cast', res.rows[0]);
  },

  // A named query run twice: Parse once as "q1", then only Bind/Execute on the second run.
  async named(client) {
    await seed(client, 3);
    const q = { name: 'q1', text: `SELECT id, name FROM ${table} WHERE id >= $1 ORDER BY id` };
    let res = await client.query({ ...q, values: [2] });
    out('first', res.rows);
    res = await client.query({ ...q, values: [3] });
    out('second', res.rows);
  },

  // rowCount of INSERT / UPDATE / DELETE, simple and parameterized.
  async rowcount(client) {
    let res = await client.query(`CREATE TABLE ${table} (id INT, name TEXT)`);
    out('create', [res.command, res.rowCount]);
    res = await client.query(`INSERT INTO ${table} VALUES (1, 'a'), (2, 'b'), (3, 'c')`);
    out('insert', [res.command, res.rowCount]);
    res = await client.query(`INSERT INTO ${table} VALUES ($1, $2)`, [4, 'd']);
    out('insert param', [res.command, res.rowCount]);
    res = await client.query(`UPDATE ${table} SET name = 'z' WHERE id >= $1`, [2]);
    out('update', [res.command, res.rowCount]);
    res = await client.query(`DELETE FROM ${table} WHERE id = 4`);
    out('delete', [res.command, res.rowCount]);
    res = await client.query(`SELECT id FROM ${table} ORDER BY id`);
    out('select', [res.command, res.rowCount]);
  },

  // err.code: 55000 for a batch-refresh create while paused, 42P01 for a missing table.
  async errors(client) {
    await seed(client, 2);
    const create = `CREATE MATERIALIZED VIEW ${table}_v WITH (refresh.interval.sec = 3600) AS `
      + `SELECT count(*) AS n FROM ${table}`;
    await client.query(`ALTER DATABASE ${database} PAUSE`);
    out('paused create', await code(client, create));
    await client.query(`ALTER DATABASE ${database} RESUME`);
    out('missing table', await code(client, `SELECT * FROM ${table}_missing`));
    out('missing table param', await code(client, `SELECT * FROM ${table}_missing WHERE id = $1`, [1]));
    out('resumed create', await code(client, create));
    const res = await client.query(`SELECT n FROM ${table}_v`);
    out('view', Number(res.rows[0].n));
  },
};

async function main() {
  const run = scenarios[scenario];
  if (!run) {
    console.error(`unknown scenario ${scenario}`);
    process.exit(2);
  }
  const client = new Client({ host, port: Number(port), database, user: 'root', connectionTimeoutMillis: 10000 });
  client.on('error', (err) => console.error(`client error: ${err.message}`));
  try {
    await client.connect();
    await run(client);
    out('done', scenario);
  } catch (err) {
    console.log(`FAILED: ${err.code} ${err.message}`);
    console.error(err.stack);
    process.exitCode = 1;
  } finally {
    await client.end().catch(() => {});
  }
}

main();
