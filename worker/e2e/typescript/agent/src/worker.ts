// The worker process: node dist/worker.js --address host:port --namespace ns
// --task-queue q --bundle workflow-bundle.js [--model-latency-ms n]. It
// prints one line "loopguard-ts-agent: polling <task queue>" on stdout once
// it polls, and stops on SIGINT or SIGTERM.

import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from './activities';

function flags(argv: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i];
    if (!k.startsWith('--') || i + 1 >= argv.length) {
      throw new Error(`bad flag ${JSON.stringify(k)}: flags are --name value`);
    }
    m.set(k.slice(2), argv[i + 1]);
  }
  return m;
}

async function main(): Promise<void> {
  const f = flags(process.argv.slice(2));
  const need = (k: string) => {
    const v = f.get(k);
    if (!v) {
      throw new Error(`missing --${k}`);
    }
    return v;
  };
  const latency = Number(f.get('model-latency-ms') ?? '0');
  if (!Number.isFinite(latency) || latency < 0) {
    throw new Error(`--model-latency-ms ${f.get('model-latency-ms')}: not a number of milliseconds`);
  }
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: need('address') });
  const taskQueue = need('task-queue');
  const worker = await Worker.create({
    connection,
    namespace: need('namespace'),
    taskQueue,
    workflowBundle: { codePath: need('bundle') },
    activities: createActivities(latency),
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
