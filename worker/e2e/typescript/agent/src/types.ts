// The shapes of the Go sample agent's arguments and results
// (activities.ModelRequest, ModelReply, ToolCall, ToolResult;
// workflows.ParallelInput, ParallelResult), field for field and in the same
// order, so that their JSON payloads are the bytes Go's data converter
// writes and the guard's detectors read a TypeScript run as a Go one.

/** The scenarios of the parallel tool agent (activities.ParallelScenarios). */
export const ParallelStuck = 'parallel-stuck';
export const ParallelHeeds = 'parallel-heeds';
export const ParallelProgressing = 'parallel-progressing';
export const parallelScenarios = [ParallelStuck, ParallelHeeds, ParallelProgressing];

/** The tools: activity types and the guard's node names. */
export const ToolWebSearch = 'WebSearch';
export const ToolFetchPage = 'FetchPage';

/** activities.MaxParallelCalls, ParallelProgressTurns. */
export const MaxParallelCalls = 16;
export const ParallelProgressTurns = 12;

/** Error types (activities.ErrBadToolCall, ErrUnknownScenario, ErrSandboxUnavailable). */
export const ErrBadToolCall = 'BadToolCall';
export const ErrUnknownScenario = 'UnknownScenario';
export const ErrSandboxUnavailable = 'SandboxUnavailable';

export interface ToolCall {
  tool: string;
  query: string;
}

export interface ToolResult {
  call: ToolCall;
  text: string;
}

/** A warning as the loop.warning signal carries it (protocol.Warning), read loosely. */
export interface LoopWarning {
  detector?: string;
  message?: string;
  directive?: string;
  n?: number;
  of?: number;
  node?: string;
}

export interface ModelRequest {
  scenario: string;
  task?: string;
  turn: number;
  width: number;
  mixed?: boolean;
  results?: ToolResult[];
  /**
   * The warning the workflow received as a loop.warning signal, for the
   * model to read in its prompt. Go's model reads it from the call's
   * header instead; absent until a warning came, so that the requests
   * before it are Go's bytes.
   */
  warning?: LoopWarning;
}

export interface ModelReply {
  calls?: ToolCall[];
  answer?: string;
  heeded?: string;
}

/** workflows.ParallelInput. */
export interface ParallelInput {
  scenario: string;
  task?: string;
  width?: number;
  mixed?: boolean;
  maxTurns?: number;
}

/** workflows.ParallelResult (LoopResult's fields, then its own). */
export interface ParallelResult {
  scenario: string;
  outcome: string;
  iterations: number;
  final: string;
  failing: number;
  lastError?: string;
  toolCalls: number;
  heeded?: string;
}

/** workflows.DefaultParallelWidth, DefaultMaxTurns. */
export const DefaultParallelWidth = 8;
export const DefaultMaxTurns = 20;
