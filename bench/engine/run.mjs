// run.mjs is the aws-local-stepfunctions side of the engine comparison (internal/enginebench). It reads a JSON job on
// standard input:
//
//   {"executions": N, "warmup": W, "concurrency": C,
//    "definitions": [{"name": "...", "definition": {...}, "input": {...},
//                     "taskResults": {"StateName": <result>}, "context": {...}}]}
//
// and, for each definition, runs W executions (not timed) and then N executions with at most C in flight, every Task
// state answered at once by a local handler returning a fresh copy of taskResults[StateName]. It prints one JSON
// object on standard output: the Node and package versions and, per definition, the wall time of the N executions,
// how many failed and the output of the last one (the Go side checks it against its own).
import { readFileSync } from 'node:fs';
import { StateMachine } from 'aws-local-stepfunctions';

const job = JSON.parse(readFileSync(0, 'utf8'));
const pkg = JSON.parse(readFileSync(new URL('./node_modules/aws-local-stepfunctions/package.json', import.meta.url), 'utf8'));

// overridesFor answers every Task state of the definition (top level; the compared definitions have no nested
// machines) with a fresh copy of its canned result, as an instant Lambda or DynamoDB call would.
function overridesFor(spec) {
  const handlers = {};
  for (const [name, result] of Object.entries(spec.taskResults ?? {})) {
    handlers[name] = async () => structuredClone(result);
  }
  return { taskResourceLocalHandlers: handlers };
}

// runMany runs count executions, at most concurrency at a time, and returns the number that failed and the last
// output. Each execution gets its own context object: the ids the Go engine would give it.
async function runMany(sm, spec, overrides, count, concurrency, offset) {
  let next = 0;
  let failures = 0;
  let output = null;
  let firstError = null;
  async function worker() {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const context = structuredClone(spec.context ?? {});
      context.Execution = { ...context.Execution, Id: `${context.Execution?.Id ?? 'execution'}:${offset + i}` };
      context.State = { ...context.State, EnteredTime: new Date().toISOString() };
      try {
        output = await sm.run(spec.input, { overrides, context }).result;
      } catch (err) {
        failures++;
        firstError ??= String(err);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return { failures, output, firstError };
}

const results = [];
for (const spec of job.definitions) {
  const sm = new StateMachine(spec.definition);
  const overrides = overridesFor(spec);
  await runMany(sm, spec, overrides, job.warmup, job.concurrency, 0);
  const start = process.hrtime.bigint();
  const run = await runMany(sm, spec, overrides, job.executions, job.concurrency, job.warmup);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  results.push({ name: spec.name, executions: job.executions, seconds, ...run });
}
process.stdout.write(JSON.stringify({ nodeVersion: process.version, packageVersion: pkg.version, results }) + '\n');
