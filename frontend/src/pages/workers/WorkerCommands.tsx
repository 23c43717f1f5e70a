import { useMutation, useQueryClient } from '@tanstack/react-query';
import { errorMessage } from '../../api/client';
import { commandWorker } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { WorkerCommand, WorkerView } from '../../api/types';
import { ConfirmAction } from '../../components/ConfirmAction';
import { notify } from '../../lib/notices';
import { commandsOpen } from './workerOrder';

const DONE: Record<WorkerCommand, string> = {
  quiet: 'takes no new jobs',
  stop: 'stops after its current jobs',
};

/** An admin's Quiet and Stop for one worker, each confirmed inline before it is sent. */
export function WorkerCommands({ worker }: { worker: WorkerView }) {
  const client = useQueryClient();
  const send = useMutation({
    mutationFn: (command: WorkerCommand) => commandWorker(worker.id, command),
    onSuccess: (sent) => {
      notify(`Sent: worker ${sent.workerId} ${DONE[sent.command]}`);
      // its next heartbeat (sent at once) carries the new state
      void client.invalidateQueries({ queryKey: queryKeys.workers });
    },
    onError: (error) => notify(`Failed: ${errorMessage(error)}`, 'error'),
  });
  const open = commandsOpen(worker);
  if (!open.quiet && !open.stop) return null;
  return (
    <div className="toolbar worker-commands" role="group" aria-label={`Commands for ${worker.id}`}>
      {open.quiet ? (
        <ConfirmAction
          label="Quiet"
          confirmLabel="Yes, quiet"
          question="Take no new jobs here?"
          onConfirm={() => send.mutate('quiet')}
          busy={send.isPending}
          danger={false}
          testId="worker-quiet"
        />
      ) : null}
      <ConfirmAction
        label="Stop"
        confirmLabel="Yes, stop"
        question="Stop once its current jobs finish?"
        onConfirm={() => send.mutate('stop')}
        busy={send.isPending}
        testId="worker-stop"
      />
    </div>
  );
}
