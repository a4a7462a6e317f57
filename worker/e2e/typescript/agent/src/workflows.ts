// The workflows of the TypeScript agent. ParallelToolAgent is the Go
// sample's workflows.ParallelToolAgent: each turn it calls the model with
// every result of the previous turn, starts all the tool calls the model
// asked for at once, and waits for them all. It carries no guard: a
// watcher outside judges its history.

import {
  ActivityFailure,
  ApplicationFailure,
  defineSignal,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { createActivities } from './activities';
import {
  DefaultMaxTurns,
  DefaultParallelWidth,
  ErrBadToolCall,
  ErrSandboxUnavailable,
  ErrUnknownScenario,
  LoopWarning,
  MaxParallelCalls,
  ModelReply,
  ParallelHeeds,
  ParallelInput,
  ParallelResult,
  ToolCall,
  ToolResult,
  parallelScenarios,
} from './types';

type Activities = ReturnType<typeof createActivities>;

// workflows.activityOptions: a short timeout and one retry, except for the
// errors that retrying cannot fix.
const acts = proxyActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 2, nonRetryableErrorTypes: [ErrSandboxUnavailable, ErrUnknownScenario] },
});

/**
 * warningSignal is the signal a watcher sends with a warning
 * (protocol.Warning, or an protocol.Notice holding one), for
 * workflows that choose to read it.
 */
export const warningSignal = defineSignal<[unknown]>('loop.warning');

/** OutcomeCompleted, OutcomeGaveUp: workflows.LoopResult's outcomes. */
const OutcomeCompleted = 'completed';
const OutcomeGaveUp = 'gave_up';

export async function ParallelToolAgent(input: ParallelInput): Promise<ParallelResult> {
  const width = input.width || DefaultParallelWidth;
  const maxTurns = input.maxTurns && input.maxTurns > 0 ? input.maxTurns : DefaultMaxTurns;
  if (!parallelScenarios.includes(input.scenario)) {
    throw ApplicationFailure.nonRetryable(`unknown scenario ${JSON.stringify(input.scenario)}`, ErrUnknownScenario);
  }
  if (!Number.isInteger(width) || width < 1 || width > MaxParallelCalls) {
    throw ApplicationFailure.nonRetryable(`width ${width}: a turn asks for 1 to ${MaxParallelCalls} tool calls`, ErrBadToolCall);
  }
  let warning: LoopWarning | undefined;
  setHandler(warningSignal, (arg: unknown) => {
    warning = readWarning(arg);
  });

  const res: ParallelResult = { scenario: input.scenario, outcome: OutcomeGaveUp, iterations: 0, final: '', failing: -1, toolCalls: 0 };
  let results: ToolResult[] = [];
  for (let turn = 1; turn <= maxTurns; turn++) {
    res.iterations = turn;
    let reply: ModelReply;
    try {
      reply = await acts.ModelTurn({
        scenario: input.scenario,
        task: input.task || undefined,
        turn,
        width,
        mixed: input.mixed || undefined,
        results: results.length > 0 ? results : undefined,
        // Only the heeding model reads warnings; the others' requests stay
        // the bytes Go's requests are.
        warning: input.scenario === ParallelHeeds ? warning : undefined,
      });
    } catch (err) {
      failed(res, err);
      continue;
    }
    if (reply.heeded && !res.heeded) {
      res.heeded = reply.heeded;
    }
    if (reply.answer) {
      res.outcome = OutcomeCompleted;
      res.final = reply.answer;
      return res;
    }
    results = await runTools(res, reply.calls ?? []);
  }
  return res;
}

/**
 * runTools runs a turn's tool calls in parallel: all started before any is
 * awaited, their results in the order the model asked for them. A tool that
 * fails gives the model its error as the result.
 */
async function runTools(res: ParallelResult, calls: ToolCall[]): Promise<ToolResult[]> {
  const started = calls.map((c) => {
    const tool = (acts as unknown as Record<string, (c: ToolCall) => Promise<ToolResult>>)[c.tool];
    return tool(c).then(
      (r) => ({ ok: true as const, r }),
      (err: unknown) => ({ ok: false as const, err }),
    );
  });
  res.toolCalls += calls.length;
  const settled = await Promise.all(started);
  return settled.map((s, i) => {
    if (s.ok) {
      return s.r;
    }
    failed(res, s.err);
    return { call: calls[i], text: `error: ${res.lastError}` };
  });
}

/** failed is LoopResult.failed: a cancellation ends the loop, any other error is noted and the loop goes on. */
function failed(res: ParallelResult, err: unknown): void {
  if (isCancellation(err)) {
    throw err;
  }
  res.lastError = errMessage(err);
  log.warn('Agent call failed, going on', { error: res.lastError });
}

/** errMessage is the message of the application failure behind err, or err's message. */
function errMessage(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
    return err.cause.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** readWarning reads a loop.warning signal's argument: a Warning, or a Notice with one. */
function readWarning(arg: unknown): LoopWarning | undefined {
  if (typeof arg !== 'object' || arg === null) {
    return undefined;
  }
  const a = arg as { warning?: LoopWarning } & LoopWarning;
  return a.warning ?? (a.directive !== undefined || a.detector !== undefined ? a : undefined);
}
