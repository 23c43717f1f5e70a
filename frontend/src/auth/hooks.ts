import { useStore } from 'zustand';
import { authStore } from '../api/instance';
import type { AuthState } from './store';

export function useAuth<T>(selector: (state: AuthState) => T): T {
  return useStore(authStore, selector);
}

export function useIsAdmin(): boolean {
  return useAuth((state) => state.session?.user.role === 'admin');
}
