import type { JobStatus } from '../api/types';
import { shortId } from '../lib/format';

export interface GraphNode {
  jobId: string;
  status: JobStatus | null;
}

const COLORS: Record<string, string> = {
  succeeded: '#1f8a3b',
  dead: '#c0263a',
  cancelled: '#6b7280',
  running: '#0f7f8f',
  failed: '#b45309',
};

const W = 150;
const H = 40;
const GAP_Y = 14;
const COL_X = [10, 230, 450];

function Node({ node, x, y, current }: { node: GraphNode; x: number; y: number; current?: boolean }) {
  const stroke = COLORS[node.status ?? ''] ?? '#1d4ed8';
  return (
    <g>
      <rect
        x={x}
        y={y}
        width={W}
        height={H}
        rx={6}
        fill={current ? '#eaf2fd' : '#fff'}
        stroke={stroke}
        strokeWidth={current ? 3 : 2}
        strokeDasharray={node.status === 'dead' || node.status === 'cancelled' ? '5 3' : undefined}
      />
      <text x={x + 10} y={y + 17} fontSize={12} fontFamily="monospace" fill="#1b1f24">
        {shortId(node.jobId)}
      </text>
      <text x={x + 10} y={y + 32} fontSize={11} fill="#374151">
        {node.status ?? 'not recorded'}
      </text>
    </g>
  );
}

/** A picture of a job between its parents (left) and children (right). Decorative: the same
 * information is listed as text next to it. */
export function DependencyGraph({
  job,
  parents,
  children,
}: {
  job: GraphNode;
  parents: GraphNode[];
  children: GraphNode[];
}) {
  const rows = Math.max(1, parents.length, children.length);
  const height = rows * (H + GAP_Y) + GAP_Y;
  const centerY = (height - H) / 2;
  const yOf = (index: number, count: number) => {
    const block = count * (H + GAP_Y) - GAP_Y;
    return (height - block) / 2 + index * (H + GAP_Y);
  };
  const [left = 10, middle = 230, right = 450] = COL_X;
  return (
    <svg viewBox={`0 0 ${right + W + 10} ${height}`} width={right + W + 10} height={height} aria-hidden="true" focusable="false">
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" fill="#6b7280" />
        </marker>
      </defs>
      {parents.map((parent, i) => (
        <line
          key={`pl-${parent.jobId}`}
          x1={left + W}
          y1={yOf(i, parents.length) + H / 2}
          x2={middle}
          y2={centerY + H / 2}
          stroke="#6b7280"
          markerEnd="url(#arrow)"
        />
      ))}
      {children.map((child, i) => (
        <line
          key={`cl-${child.jobId}`}
          x1={middle + W}
          y1={centerY + H / 2}
          x2={right}
          y2={yOf(i, children.length) + H / 2}
          stroke="#6b7280"
          markerEnd="url(#arrow)"
        />
      ))}
      {parents.map((parent, i) => (
        <Node key={parent.jobId} node={parent} x={left} y={yOf(i, parents.length)} />
      ))}
      <Node node={job} x={middle} y={centerY} current />
      {children.map((child, i) => (
        <Node key={child.jobId} node={child} x={right} y={yOf(i, children.length)} />
      ))}
    </svg>
  );
}
