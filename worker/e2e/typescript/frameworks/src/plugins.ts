// The integrations' worker plugins, each with its scripted model: the same
// plugins configure the workflow bundle (bundle.ts) and the worker.

import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { OpenAIAgentsPlugin } from '@temporalio/openai-agents';
import { aiSdkProvider, openAIProvider } from './models';

export function plugins() {
  return [
    new AiSdkPlugin({ modelProvider: aiSdkProvider }),
    new OpenAIAgentsPlugin({ modelProvider: openAIProvider, modelParams: { startToCloseTimeout: '30s' } }),
  ];
}
