import { useNotices } from '../lib/notices';

export function Notices() {
  const notices = useNotices((state) => state.notices);
  const dismiss = useNotices((state) => state.dismiss);
  return (
    <div className="notices" role="status" aria-live="polite" data-testid="notices">
      {notices.map((notice) => (
        <div key={notice.id} className={`notice notice-${notice.tone}`}>
          <span>{notice.text}</span>
          <button type="button" onClick={() => dismiss(notice.id)} aria-label="Dismiss message">
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
