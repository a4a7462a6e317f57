// The agents, written as each integration's documentation shows: the agent
// loop runs in the workflow, each model call is the integration's model
// activity, and the tool is an activity. The model name carries the
// scripted model's scenario (script.ts).

import { generateText, stepCountIs, tool } from 'ai';
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { Agent } from '@openai/agents-core';
import { TemporalOpenAIRunner, activityAsTool } from '@temporalio/openai-agents/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';
import type * as activities from './activities';
import { ReadFile } from './script';

const { readFile } = proxyActivities<typeof activities>({ startToCloseTimeout: '30s' });

/** aiSdkAgent runs the AI SDK's tool loop on the scripted model. */
export async function aiSdkAgent(model: string, maxSteps: number): Promise<string> {
  const result = await generateText({
    model: temporalProvider.languageModel(model),
    system: 'You fix the build. Read files with readFile.',
    prompt: 'The build fails. Find out why.',
    tools: {
      [ReadFile]: tool({
        description: 'Read a file of the repository',
        inputSchema: z.object({ path: z.string() }),
        execute: async (input: { path: string }) => readFile(input),
      }),
    },
    stopWhen: stepCountIs(maxSteps),
  });
  return result.text;
}

/** openAIAgent runs the OpenAI Agents SDK's runner on the scripted model. */
export async function openAIAgent(model: string, maxTurns: number): Promise<string> {
  const agent = new Agent({
    name: 'BuildFixer',
    instructions: 'You fix the build. Read files with readFile.',
    model,
    tools: [
      activityAsTool<typeof activities.readFile>(
        {
          name: ReadFile,
          description: 'Read a file of the repository',
          parameters: {
            type: 'object',
            properties: { path: { type: 'string' } },
            required: ['path'],
            additionalProperties: false,
          },
        },
        { startToCloseTimeout: '30s' }
      ),
    ],
  });
  const result = await new TemporalOpenAIRunner().run(agent, 'The build fails. Find out why.', { maxTurns });
  return result.finalOutput ?? '';
}
