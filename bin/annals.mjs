#!/usr/bin/env node
// `annals`, the operator CLI (package bin; `npm run cli --` is an alias): runs the compiled
// src/cli/main.ts. Results go to stdout, one JSON document for every --json command; everything else to
// stderr. See docs/operations.md "The annals command".
import { runCompiled } from './run-compiled.mjs';

await runCompiled('annals', 'src/cli/main.js');
