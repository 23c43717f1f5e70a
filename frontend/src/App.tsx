import { QueryClientProvider } from '@tanstack/react-query';
import { lazy, useLayoutEffect, useState } from 'react';
import { BrowserRouter, Route, Routes } from 'react-router';
import { authStore } from './api/instance';
import { setChosenProject } from './api/projectScope';
import { RequireAuth } from './auth/RequireAuth';
import { Layout } from './components/Layout';
import { LiveProvider } from './live/LiveProvider';
import { JobsPage } from './pages/jobs/JobsPage';
import { LoginPage } from './pages/login/LoginPage';
import { NotFoundPage } from './pages/not-found/NotFoundPage';
import { RegisterPage } from './pages/register/RegisterPage';
import { SubmitPage } from './pages/submit/SubmitPage';
import { useProjectId } from './project/navigation';

// Pages with heavy dependencies (charts, cron) or rarely visited load on demand.
const OverviewPage = lazy(() => import('./pages/overview/OverviewPage').then((m) => ({ default: m.OverviewPage })));
const JobDetailPage = lazy(() => import('./pages/job/JobDetailPage').then((m) => ({ default: m.JobDetailPage })));
const DeadLettersPage = lazy(() =>
  import('./pages/dead/DeadLettersPage').then((m) => ({ default: m.DeadLettersPage })),
);
const SchedulesPage = lazy(() =>
  import('./pages/schedules/SchedulesPage').then((m) => ({ default: m.SchedulesPage })),
);
const QueuesPage = lazy(() => import('./pages/queues/QueuesPage').then((m) => ({ default: m.QueuesPage })));
const QueueDetailPage = lazy(() =>
  import('./pages/queues/QueueDetailPage').then((m) => ({ default: m.QueueDetailPage })),
);
const BatchesPage = lazy(() => import('./pages/batches/BatchesPage').then((m) => ({ default: m.BatchesPage })));
const BatchDetailPage = lazy(() => import('./pages/batches/BatchDetailPage').then((m) => ({ default: m.BatchDetailPage })));
const OrganizationsPage = lazy(() =>
  import('./pages/organizations/OrganizationsPage').then((m) => ({ default: m.OrganizationsPage })),
);
const OrganizationPage = lazy(() =>
  import('./pages/organizations/OrganizationPage').then((m) => ({ default: m.OrganizationPage })),
);
const ApiKeysPage = lazy(() => import('./pages/projects/ApiKeysPage').then((m) => ({ default: m.ApiKeysPage })));
const WorkersPage = lazy(() => import('./pages/workers/WorkersPage').then((m) => ({ default: m.WorkersPage })));
import { createQueryClient } from './queryClient';

/** Client routes: none starts with /api, /auth, /ws, /docs, /openapi.json, /health, /ready, /metrics. */
export function AppRoutes() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route path="/register" element={<RegisterPage />} />
      <Route
        element={
          <RequireAuth>
            <Layout />
          </RequireAuth>
        }
      >
        <Route index element={<OverviewPage />} />
        <Route path="submit" element={<SubmitPage />} />
        <Route path="jobs" element={<JobsPage />} />
        <Route path="jobs/:jobId" element={<JobDetailPage />} />
        <Route path="dead-letters" element={<DeadLettersPage />} />
        <Route path="schedules" element={<SchedulesPage />} />
        <Route path="queues" element={<QueuesPage />} />
        <Route path="queues/:queueId" element={<QueueDetailPage />} />
        <Route path="batches" element={<BatchesPage />} />
        <Route path="batches/:batchId" element={<BatchDetailPage />} />
        <Route path="workers" element={<WorkersPage />} />
        <Route path="organizations" element={<OrganizationsPage />} />
        <Route path="organizations/:orgId" element={<OrganizationPage />} />
        <Route path="projects/:projectId/api-keys" element={<ApiKeysPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}

/**
 * The project the URL chooses: the API client's requests act in it (`X-Project`, committed
 * before any effect of the pages asks for something) and the live socket hears its changes.
 */
function FollowProject() {
  const projectId = useProjectId();
  useLayoutEffect(() => setChosenProject(projectId), [projectId]);
  return (
    <LiveProvider auth={authStore} projectId={projectId}>
      <AppRoutes />
    </LiveProvider>
  );
}

export function App() {
  const [client] = useState(createQueryClient);
  return (
    <QueryClientProvider client={client}>
      <BrowserRouter>
        <FollowProject />
      </BrowserRouter>
    </QueryClientProvider>
  );
}
