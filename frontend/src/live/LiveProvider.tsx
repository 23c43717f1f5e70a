import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { useStore } from 'zustand';
import type { AuthStore } from '../auth/store';
import { affectedKeys, isAggregate, JobDetailFollower, patchJobCaches, ThrottledInvalidator } from './cache';
import { LiveConnection, type LiveConnectionOptions, type LiveStatus } from './connection';
import { LiveContext } from './context';

interface Props {
  auth: AuthStore;
  children: ReactNode;
  /** The project the console follows (null: all): the socket hears its changes only. */
  projectId?: string | null;
  /** Tests pass a fake socket factory. */
  createSocket?: LiveConnectionOptions['createSocket'];
  throttleMs?: number;
}

/** Owns the app's one live connection while a session exists and feeds the query cache. */
export function LiveProvider({ auth, children, projectId = null, createSocket, throttleMs = 1_000 }: Props) {
  const client = useQueryClient();
  const loggedIn = useStore(auth, (state) => state.session !== null);
  const [connection] = useState(
    () =>
      new LiveConnection({
        getToken: () => auth.getState().session?.token ?? null,
        refreshToken: () => auth.getState().refresh(),
        projectId,
        ...(createSocket ? { createSocket } : {}),
      }),
  );
  const [status, setStatus] = useState<LiveStatus>(connection.status);

  useEffect(() => {
    // rows and details refresh quickly; aggregates (analytics: a dozen requests) at most every 5 s
    const invalidator = new ThrottledInvalidator(client, throttleMs);
    const aggregates = new ThrottledInvalidator(client, Math.max(throttleMs, 5_000));
    // a job page whose refetch came back without the change asks again until it has it
    const follower = new JobDetailFollower(client, 2 * throttleMs);
    const offStatus = connection.onStatus(setStatus);
    const offConnected = connection.onConnected(() => {
      // catch up on whatever happened while the socket was down (or before it opened)
      void client.invalidateQueries();
    });
    const offMessage = connection.onMessage((message) => {
      if (message.type === 'job.changes' && message.changes.length > 0) {
        patchJobCaches(client, message.changes);
        const keys = affectedKeys(message.changes);
        invalidator.add(keys.filter((key) => !isAggregate(key)));
        aggregates.add(keys.filter(isAggregate));
        follower.expect(message.changes);
      }
    });
    const online = () => connection.retryNow();
    window.addEventListener('online', online);
    return () => {
      offStatus();
      offConnected();
      offMessage();
      invalidator.dispose();
      aggregates.dispose();
      follower.dispose();
      window.removeEventListener('online', online);
    };
  }, [client, connection, throttleMs]);

  useEffect(() => {
    // before the start below: a first connection goes to the project chosen
    connection.setProject(projectId);
  }, [connection, projectId]);

  useEffect(() => {
    if (loggedIn) connection.start();
    else connection.stop();
  }, [connection, loggedIn]);

  useEffect(() => () => connection.stop(), [connection]);

  return <LiveContext.Provider value={{ status, connection }}>{children}</LiveContext.Provider>;
}
