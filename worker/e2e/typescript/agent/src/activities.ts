// The activities of the TypeScript agent: the fake model (ModelTurn) and
// its tools (WebSearch, FetchPage), the activity types of the Go sample's
// activities.ParallelTools.

import { ApplicationFailure, log, sleep } from '@temporalio/activity';
import { ModelReply, ModelRequest, ToolCall, ToolFetchPage, ToolResult, ToolWebSearch } from './types';
import { ScriptError, scriptModelTurn, scriptTool } from './model';

/**
 * createActivities returns the activities; latencyMs is how long each
 * model turn takes (a model's latency, 0 for none), so that a test can
 * watch a loop that does not finish in a blink.
 */
export function createActivities(latencyMs: number) {
  return {
    async ModelTurn(req: ModelRequest): Promise<ModelReply> {
      if (latencyMs > 0) {
        await sleep(latencyMs);
      }
      const reply = scripted(() => scriptModelTurn(req));
      log.debug('Model turn', { scenario: req.scenario, turn: req.turn, calls: reply.calls?.length ?? 0 });
      return reply;
    },
    async [ToolWebSearch](call: ToolCall): Promise<ToolResult> {
      return scripted(() => scriptTool(ToolWebSearch, call));
    },
    async [ToolFetchPage](call: ToolCall): Promise<ToolResult> {
      return scripted(() => scriptTool(ToolFetchPage, call));
    },
  };
}

/** scripted turns a script's error into the non-retryable failure Go's activities return. */
function scripted<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof ScriptError) {
      throw ApplicationFailure.nonRetryable(err.message, err.type);
    }
    throw err;
  }
}
