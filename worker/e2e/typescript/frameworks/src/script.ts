// The scripted model's turns, shared by both frameworks' models. A model
// name is "<scenario>:<turns>": the scenario says what the agent does each
// turn, the number how many tool-calling turns come before its final
// answer. The turn is counted from the conversation the framework sends
// (the tool results in it), as a real model sees it, so the model keeps
// no state between activities.

export interface Turn {
  /** The model's words: beside the tool call, or the final answer. */
  text: string;
  /** The tool it calls ("" for the final answer) and its arguments. */
  tool: string;
  args: Record<string, unknown>;
}

/** The tool both agents call. */
export const ReadFile = 'readFile';

const rewordings = [
  'Let me look at the file again.',
  'I will read the file once more to be sure.',
  'Reading the file again; maybe it changed.',
  'One more look at the file should settle it.',
  'Let me try that again.',
];

/**
 * turn is what the model answers at turn i (from 0) under model name
 * "<scenario>:<turns>":
 *   - loop: the same file every turn, in other words each time (the loop
 *     an agent falls into when a tool's answer does not help it);
 *   - progress: a new file every turn (an agent that works through a
 *     codebase).
 */
export function turn(model: string, i: number): Turn {
  const [scenario, n] = model.split(':');
  const turns = Number(n);
  if (!Number.isInteger(turns) || turns < 0) {
    throw new Error(`model ${JSON.stringify(model)}: want "<scenario>:<turns>"`);
  }
  if (i >= turns) {
    return { text: `Done after ${turns} turns.`, tool: '', args: {} };
  }
  switch (scenario) {
    case 'loop':
      return { text: rewordings[i % rewordings.length], tool: ReadFile, args: { path: 'src/config.yaml' } };
    case 'progress':
      return { text: `Next I read file ${i + 1} of ${turns}.`, tool: ReadFile, args: { path: `src/module${i + 1}.ts` } };
    default:
      throw new Error(`model ${JSON.stringify(model)}: unknown scenario ${JSON.stringify(scenario)}`);
  }
}

/** fileText is what the readFile tool returns for path. */
export function fileText(path: string): string {
  if (path === 'src/config.yaml') {
    return 'error: src/config.yaml: permission denied';
  }
  return `// ${path}\nexport const name = ${JSON.stringify(path)};\n`;
}
