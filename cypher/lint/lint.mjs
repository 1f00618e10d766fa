#!/usr/bin/env node
// Lint Cypher statements offline with Neo4j's own linter (@neo4j-cypher/language-support,
// export `lintCypherQuery`: the parser plus Neo4j's semantic analysis, as used by the Neo4j
// VS Code extension and Workspace).
//
// stdin:  JSON array [{"name": "...", "text": "..."}]
// stdout: JSON array [{"name": "...", "diagnostics": [{"message", "severity", "line", "column"}]}]
//         in input order; severity is "error" | "warning" | "information" | "hint";
//         line and column are 1-based (where the diagnostic starts in "text").
// Exit status: 0 whenever linting ran, whatever the diagnostics; non-zero only when this script
// itself fails (bad input, missing package, ...), with the reason on stderr.
//
// No database schema is given (no labels, types, property keys, functions, procedures or
// parameters), so labels and functions are not checked against a database, and every $parameter
// is reported as "Parameter $name is not defined." — callers filter that message.

import { createRequire } from 'node:module';

// The package's ESM build uses extension-less relative imports (made for bundlers) that Node's
// ESM loader rejects, so load its CommonJS build ("require" export) instead.
const require = createRequire(import.meta.url);

// Neo4j 5 Cypher; otherwise an empty schema.
const SCHEMA = Object.freeze({ defaultLanguage: 'CYPHER 5' });
const SEVERITY = { 1: 'error', 2: 'warning', 3: 'information', 4: 'hint' };

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function parseInput(raw) {
  const items = JSON.parse(raw);
  if (!Array.isArray(items)) throw new Error('input must be a JSON array of {name, text}');
  items.forEach((item, index) => {
    if (item === null || typeof item !== 'object' || typeof item.name !== 'string' || typeof item.text !== 'string') {
      throw new Error(`input item ${index} must be an object with string "name" and "text"`);
    }
  });
  return items;
}

function lint(lintCypherQuery, text) {
  return lintCypherQuery(text, SCHEMA, false).map((d) => ({
    message: d.message,
    severity: SEVERITY[d.severity] ?? String(d.severity ?? 'error'),
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
  }));
}

async function main() {
  const { lintCypherQuery } = require('@neo4j-cypher/language-support');
  const items = parseInput(await readStdin());
  // Keep stdout pure JSON even if the library logs something.
  const log = console.log;
  console.log = console.info = console.debug = (...args) => console.error(...args);
  let results;
  try {
    results = items.map(({ name, text }) => ({ name, diagnostics: lint(lintCypherQuery, text) }));
  } finally {
    console.log = log;
  }
  process.stdout.write(JSON.stringify(results) + '\n');
}

main().catch((error) => {
  process.stderr.write(`cypher/lint/lint.mjs: ${error?.stack ?? error}\n`);
  process.exit(2);
});
