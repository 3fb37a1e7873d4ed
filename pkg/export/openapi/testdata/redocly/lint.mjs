// Lints an OpenAPI document with Redocly's recommended ruleset and prints
// one line per problem: severity, rule, JSON pointer, message (tab
// separated). Exit code 0 whatever it finds; 2 when linting itself fails.
import { lint, createConfig } from '@redocly/openapi-core';

const file = process.argv[2];
try {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lint({ ref: file, config });
  for (const p of problems) {
    const where = (p.location && p.location[0] && p.location[0].pointer) || '';
    console.log([p.severity, p.ruleId, where, p.message].join('\t'));
  }
} catch (err) {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(2);
}
