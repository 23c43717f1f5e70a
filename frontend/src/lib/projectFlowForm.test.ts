import { describe, expect, it } from 'vitest';
import type { ProjectFlowView } from '../api/types';
import { formatQuota, lastChanged, projectFlowChange, projectFlowValues, validateProjectFlow } from './projectFlowForm';

const VIEW: ProjectFlowView = {
  projectId: 'p1',
  weight: 2,
  maxWaiting: null,
  maxSubmittedPerDay: 30,
  maxRunning: 4,
  updatedBy: 'a@example.com',
  updatedAt: '2030-01-01T00:00:00Z',
};

describe('project flow form', () => {
  it('reads a view as text, an empty field for no quota', () => {
    expect(projectFlowValues(VIEW)).toEqual({ weight: '2', maxWaiting: '', maxSubmittedPerDay: '30', maxRunning: '4' });
    expect(formatQuota(null)).toBe('none');
    expect(lastChanged({ ...VIEW, updatedBy: null, updatedAt: null })).toMatch(/^never/);
    expect(lastChanged(VIEW)).toMatch(/^by a@example\.com, /);
  });

  it('takes whole numbers: the weight 1 to 100 and required, a quota from 1 or empty', () => {
    const ok = validateProjectFlow({ weight: ' 100 ', maxWaiting: '', maxSubmittedPerDay: '2147483647', maxRunning: '3' }, 'f');
    expect(ok).toEqual({ errors: {}, settings: { weight: 100, maxWaiting: null, maxSubmittedPerDay: 2147483647, maxRunning: 3 } });
    for (const weight of ['0', '101', '2.5', '-1', 'x', '1e2']) {
      expect(validateProjectFlow({ weight, maxWaiting: '', maxSubmittedPerDay: '', maxRunning: '' }, 'f').errors).toEqual({
        'f.weight': 'A whole number, 1 to 100',
      });
    }
    expect(validateProjectFlow({ weight: '', maxWaiting: '', maxSubmittedPerDay: '', maxRunning: '' }, 'f').errors['f.weight']).toMatch(/^Required/);
    const bad = validateProjectFlow({ weight: '1', maxWaiting: '0', maxSubmittedPerDay: '2147483648', maxRunning: '1.5' }, 'f');
    expect(bad.settings).toBeNull();
    expect(Object.keys(bad.errors)).toEqual(['f.maxWaiting', 'f.maxSubmittedPerDay', 'f.maxRunning']);
  });

  it('changes only what differs, a cleared quota as null', () => {
    expect(projectFlowChange(VIEW, { weight: 2, maxWaiting: null, maxSubmittedPerDay: 30, maxRunning: 4 })).toEqual({});
    expect(projectFlowChange(VIEW, { weight: 7, maxWaiting: 5, maxSubmittedPerDay: null, maxRunning: null })).toEqual({
      weight: 7,
      maxWaiting: 5,
      maxSubmittedPerDay: null,
      maxRunning: null,
    });
  });
});
