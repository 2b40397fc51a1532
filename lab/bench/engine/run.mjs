// run.mjs is the aws-local-stepfunctions side of the engine comparison (lab/enginebench). It reads one JSON
// request per line on standard input and writes one JSON reply per line on standard output:
//
//   {"op": "load", "definitions": [{"name": "...", "definition": {...}, "input": {...},
//                                   "taskResults": {"StateName": <result>}, "context": {...}}]}
//     → {"nodeVersion": "v24.15.0", "packageVersion": "3.0.0"}
//   {"op": "run", "definition": 0, "executions": N, "concurrency": C}
//     → {"seconds": 1.23, "failures": 0, "firstError": null, "output": <the output of the last execution>}
//
// A run completes N executions of the definition with at most C in flight; every Task state is answered at once by a
// local handler returning a fresh copy of taskResults[StateName]. The Go side alternates its own runs with these, so
// that both engines see the same load on a shared machine.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { StateMachine } from 'aws-local-stepfunctions';

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
async function runMany(machine, count, concurrency) {
  const { sm, spec, overrides } = machine;
  let next = 0;
  let failures = 0;
  let output = null;
  let firstError = null;
  async function worker() {
    for (;;) {
      if (next >= count) return;
      const i = machine.started++;
      next++;
      const context = structuredClone(spec.context ?? {});
      context.Execution = { ...context.Execution, Id: `${context.Execution?.Id ?? 'execution'}:${i}` };
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

let machines = [];
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  const req = JSON.parse(line);
  let reply;
  switch (req.op) {
    case 'load':
      machines = req.definitions.map((spec) => ({
        sm: new StateMachine(spec.definition),
        spec,
        overrides: overridesFor(spec),
        started: 0,
      }));
      reply = { nodeVersion: process.version, packageVersion: pkg.version };
      break;
    case 'run': {
      const start = process.hrtime.bigint();
      const run = await runMany(machines[req.definition], req.executions, req.concurrency);
      reply = { seconds: Number(process.hrtime.bigint() - start) / 1e9, ...run };
      break;
    }
    default:
      reply = { error: `unknown op ${req.op}` };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
