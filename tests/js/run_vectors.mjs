// Run one exported function of an ES module over a list of argument lists.
//   node run_vectors.mjs <module file> <function name>  < args.json  > results.json
// tests/test_explorers.py uses it on the bundled modules, the exact text the
// widget and the book page run, and compares the results with the package.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { decode, encode } from "./compare.mjs";

const [modulePath, functionName] = process.argv.slice(2);
const mod = await import(pathToFileURL(modulePath).href);
if (typeof mod[functionName] !== "function") {
  console.error(`${modulePath} exports no function ${functionName}`);
  process.exit(2);
}
const calls = decode(JSON.parse(readFileSync(0, "utf-8")));
process.stdout.write(JSON.stringify(encode(calls.map((args) => mod[functionName](...args)))));
