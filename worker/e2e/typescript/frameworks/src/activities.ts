// The agents' tool, an activity of its own type in both frameworks.

import { fileText } from './script';

export async function readFile(input: { path: string }): Promise<string> {
  return fileText(input.path);
}
