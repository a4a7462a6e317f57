// The scripted models, one per framework, run inside each framework's own
// model activity (invokeModel, invokeModelActivity) as a real provider's
// client would: each response is made as a provider makes it, with fresh
// ids, a usage block that grows with the prompt and, beside each tool
// call, the model's words.

import { randomBytes } from 'crypto';
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult, ProviderV4 } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { Usage } from '@openai/agents-core';
import type { Model, ModelProvider, ModelRequest, ModelResponse } from '@openai/agents-core';
import { turn } from './script';

/** id is a provider's id: prefix and 24 random letters and digits. */
function id(prefix: string): string {
  const abc = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return prefix + Array.from(randomBytes(24), (b) => abc[b % abc.length]).join('');
}

/** tokens is a rough token count of what was sent. */
function tokens(sent: unknown): number {
  return Math.ceil(JSON.stringify(sent).length / 4);
}

/** aiSdkProvider resolves every model id to the scripted model. */
export const aiSdkProvider = {
  specificationVersion: 'v4',
  languageModel: (modelId: string) =>
    new MockLanguageModelV4({
      provider: 'scripted',
      modelId,
      doGenerate: async (options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
        const done = options.prompt.filter((m) => m.role === 'tool').length;
        const t = turn(modelId, done);
        const input = tokens(options.prompt);
        const content: LanguageModelV4GenerateResult['content'] = [{ type: 'text', text: t.text }];
        if (t.tool) {
          content.push({ type: 'tool-call', toolCallId: id('call_'), toolName: t.tool, input: JSON.stringify(t.args) });
        }
        return {
          content,
          finishReason: { unified: t.tool ? 'tool-calls' : 'stop', raw: t.tool ? 'tool_calls' : 'stop' },
          usage: {
            inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 20, text: 20, reasoning: 0 },
          },
          response: { id: id('resp_'), timestamp: new Date(), modelId },
          warnings: [],
        } as LanguageModelV4GenerateResult;
      },
    }),
  embeddingModel: () => {
    throw new Error('the scripted provider has no embedding model');
  },
  imageModel: () => {
    throw new Error('the scripted provider has no image model');
  },
} as unknown as ProviderV4;

/** ScriptedModel answers as the OpenAI Responses API would. */
class ScriptedModel implements Model {
  constructor(private readonly name: string) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items = typeof request.input === 'string' ? [] : request.input;
    const done = items.filter((it) => (it as { type?: string }).type === 'function_call_result').length;
    const t = turn(this.name, done);
    const output: ModelResponse['output'] = [
      {
        type: 'message',
        id: id('msg_'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: t.text }],
      },
    ];
    if (t.tool) {
      output.push({
        type: 'function_call',
        id: id('fc_'),
        callId: id('call_'),
        name: t.tool,
        status: 'completed',
        arguments: JSON.stringify(t.args),
      });
    }
    const input = tokens(request.input);
    return {
      // As the OpenAI provider reads the Responses API's usage.
      usage: new Usage({
        requests: 1,
        input_tokens: input,
        output_tokens: 20,
        total_tokens: input + 20,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      }),
      output,
      responseId: id('resp_'),
    };
  }

  getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the scripted model does not stream');
  }
}

/** openAIProvider resolves every model name to the scripted model. */
export const openAIProvider: ModelProvider = {
  getModel: (name?: string) => new ScriptedModel(name ?? ''),
};
