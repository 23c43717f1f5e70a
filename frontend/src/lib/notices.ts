/** Short confirmations and failures of actions, announced politely (see <Notices/>). */
import { create } from 'zustand';

export interface Notice {
  id: number;
  tone: 'info' | 'error';
  text: string;
}

interface NoticeState {
  notices: Notice[];
  push: (text: string, tone?: Notice['tone']) => void;
  dismiss: (id: number) => void;
}

let nextId = 1;

export const useNotices = create<NoticeState>()((set) => ({
  notices: [],
  push(text, tone = 'info') {
    const id = nextId++;
    set((state) => ({ notices: [...state.notices.slice(-3), { id, tone, text }] }));
    setTimeout(() => {
      set((state) => ({ notices: state.notices.filter((n) => n.id !== id) }));
    }, tone === 'error' ? 10_000 : 5_000);
  },
  dismiss(id) {
    set((state) => ({ notices: state.notices.filter((n) => n.id !== id) }));
  },
}));

export function notify(text: string, tone: Notice['tone'] = 'info'): void {
  useNotices.getState().push(text, tone);
}
