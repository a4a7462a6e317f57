// bundle writes the workflow bundle once at build time, through the
// integrations' plugins (they add the polyfills and interceptors their
// workflow code needs): node dist/bundle.js <out.js>.

import { writeFile } from 'fs/promises';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { plugins } from './plugins';

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) {
    throw new Error('usage: node dist/bundle.js <out.js>');
  }
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./workflows'),
    plugins: plugins(),
    logger: new DefaultLogger('WARN'),
  });
  await writeFile(out, code);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
