// The worker process: node dist/worker.js --address host:port --namespace ns
// --task-queue q --bundle workflow-bundle.js [--model-latency-ms n, unused].
// It prints "loopguard-ts-agent: polling <task queue>" on stdout once it
// polls, as the harness (harness.go) waits for, and stops on SIGINT or
// SIGTERM.

import { parseArgs } from 'util';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities';
import { plugins } from './plugins';

async function main(): Promise<void> {
  // The harness's flags; --model-latency-ms is the other agent's, unused.
  const { values: f } = parseArgs({
    options: {
      address: { type: 'string' },
      namespace: { type: 'string' },
      'task-queue': { type: 'string' },
      bundle: { type: 'string' },
      'model-latency-ms': { type: 'string' },
    },
  });
  const need = (k: 'address' | 'namespace' | 'task-queue' | 'bundle') => {
    const v = f[k];
    if (!v) {
      throw new Error(`missing --${k}`);
    }
    return v;
  };
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: need('address') });
  const taskQueue = need('task-queue');
  const worker = await Worker.create({
    connection,
    namespace: need('namespace'),
    taskQueue,
    workflowBundle: { codePath: need('bundle') },
    activities,
    plugins: plugins(),
  });
  const running = worker.run();
  console.log(`loopguard-ts-agent: polling ${taskQueue}`);
  await running;
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
