// The fake model and tools: activities.scriptModelTurn, toolCalls and
// scriptTool of the Go sample, ported line for line (no network, a pure
// function of the request), so that a TypeScript run makes the calls, with
// the arguments and results, a Go run of the same scenario makes.

import {
  ErrBadToolCall,
  ErrUnknownScenario,
  MaxParallelCalls,
  ModelReply,
  ModelRequest,
  ParallelHeeds,
  ParallelProgressTurns,
  ParallelStuck,
  ToolCall,
  ToolFetchPage,
  ToolResult,
  ToolWebSearch,
  parallelScenarios,
} from './types';

/** A non-retryable error of a type, as temporal.NewNonRetryableApplicationError makes one. */
export class ScriptError extends Error {
  constructor(
    message: string,
    readonly type: string,
  ) {
    super(message);
    this.name = 'ScriptError';
  }
}

// The words the scripted searches are made of (activities/parallel.go).
const subjects = [
  'postgres', 'redis', 'kafka', 'nginx', 'envoy', 'etcd', 'grpc', 'protobuf',
  'kubernetes', 'terraform', 'prometheus', 'grafana', 'temporal', 'vault', 'consul', 'traefik',
];
const aspects = [
  'installation', 'configuration', 'replication', 'upgrades', 'backups', 'metrics',
  'security', 'tuning', 'logging', 'migrations', 'scaling', 'licensing',
];
const findings = [
  'deprecated', 'stable', 'experimental', 'breaking', 'optional', 'recommended',
  'removed', 'renamed', 'default', 'documented', 'undocumented', 'required',
];

/** What the heeding model narrows every search to. */
const heededAspect = 'release notes';

/** validParallel is activities.ValidParallel. */
export function validParallel(scenario: string, width: number): void {
  if (!parallelScenarios.includes(scenario)) {
    throw new ScriptError(`unknown scenario ${JSON.stringify(scenario)}`, ErrUnknownScenario);
  }
  if (!Number.isInteger(width) || width < 1 || width > MaxParallelCalls) {
    throw new ScriptError(`width ${width}: a turn asks for 1 to ${MaxParallelCalls} tool calls`, ErrBadToolCall);
  }
}

/** scriptModelTurn is the scripted model of one turn. */
export function scriptModelTurn(req: ModelRequest): ModelReply {
  validParallel(req.scenario, req.width);
  const turn = Math.max(req.turn, 1);
  switch (req.scenario) {
    case ParallelStuck:
      return { calls: toolCalls(req, 'latest changes') };
    case ParallelHeeds: {
      const results = req.results ?? [];
      if (results.length > 0 && results[0].call.query.includes(heededAspect)) {
        return { answer: `read the ${heededAspect} of ${results.length} projects: ${results[0].text}` };
      }
      if (req.warning) {
        const w = req.warning;
        return { calls: toolCalls(req, heededAspect), heeded: `warning ${w.n ?? 0}/${w.of ?? 0}: ${w.directive ?? ''}` };
      }
      return { calls: toolCalls(req, 'latest changes') };
    }
    default: // ParallelProgressing
      if (turn > ParallelProgressTurns) {
        return { answer: `surveyed ${ParallelProgressTurns} aspects of ${req.width} projects` };
      }
      return { calls: toolCalls(req, aspects[(turn - 1) % aspects.length]) };
  }
}

/** toolCalls are a turn's calls: one per subject, about aspect. */
function toolCalls(req: ModelRequest, aspect: string): ToolCall[] {
  const calls: ToolCall[] = [];
  for (let i = 0; i < req.width; i++) {
    if (req.mixed && i % 2 === 1) {
      calls.push({ tool: ToolFetchPage, query: `docs ${subjects[i]} ${aspect}` });
    } else {
      calls.push({ tool: ToolWebSearch, query: `${subjects[i]} ${aspect}` });
    }
  }
  return calls;
}

/** scriptTool is a scripted tool: the same call reads the same. */
export function scriptTool(tool: string, call: ToolCall): ToolResult {
  if (!call || call.tool !== tool || !call.query) {
    throw new ScriptError(`${tool} cannot run ${call?.tool ?? ''} ${JSON.stringify(call?.query ?? '')}`, ErrBadToolCall);
  }
  const sum = fnv32a(`${tool}\x00${call.query}`);
  const pick = (shift: number) => findings[(sum >>> shift) % findings.length];
  return { call: { tool: call.tool, query: call.query }, text: `${call.query}: ${pick(0)}, ${pick(8)} and ${pick(16)}` };
}

/** fnv32a is Go's hash/fnv New32a over the UTF-8 bytes of s. */
export function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
