// bundle writes the workflow bundle once at build time, so that the worker
// starts without running webpack: node dist/bundle.js <out.js>.

import { writeFile } from 'fs/promises';
import { bundleWorkflowCode } from '@temporalio/worker';

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) {
    throw new Error('usage: node dist/bundle.js <out.js>');
  }
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows'), logger: quiet });
  await writeFile(out, code);
}

const quiet = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn(message: string) {
    console.error(message);
  },
  error(message: string) {
    console.error(message);
  },
};

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
