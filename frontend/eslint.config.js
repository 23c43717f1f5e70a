import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import reactRefresh from 'eslint-plugin-react-refresh';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The console follows a project chosen in the URL (`?project=`, src/project/): links and
// navigations keep it only through src/project/links.tsx and navigation.ts, and a query of a
// project's data carries it in its key and header only through useScopedQuery.
const ROUTER_WRAPPED = {
  name: 'react-router',
  importNames: ['Link', 'NavLink', 'Navigate', 'useNavigate', 'useSearchParams'],
  message: 'Import it from src/project/links.tsx or src/project/navigation.ts: they keep the chosen project (?project=).',
};
const QUERY_SCOPED = {
  name: '@tanstack/react-query',
  importNames: ['useQuery', 'useSuspenseQuery'],
  message:
    "Use useScopedQuery (src/project/useScopedQuery.ts): the key and the request carry the chosen project. Only the organization, project and auth routes' reads use useQuery.",
};

export default tseslint.config(
  { ignores: ['dist', 'coverage', 'src/api/schema.d.ts'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.strictTypeChecked],
    languageOptions: {
      ecmaVersion: 2022,
      globals: globals.browser,
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: {
      'react-hooks': reactHooks,
      'react-refresh': reactRefresh,
    },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'react-refresh/only-export-components': ['warn', { allowConstantExport: true }],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { attributes: false } },
      ],
    },
  },
  {
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['**/*.test.{ts,tsx}', 'src/test/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [ROUTER_WRAPPED, QUERY_SCOPED] }] },
  },
  {
    // reads of the organization, project and auth routes: no project in their key or header
    files: [
      'src/pages/organizations/**',
      'src/pages/projects/**',
      'src/pages/login/**',
      'src/project/directory.ts',
      'src/project/useScopedQuery.ts',
    ],
    ignores: ['**/*.test.{ts,tsx}'],
    rules: { 'no-restricted-imports': ['error', { paths: [ROUTER_WRAPPED] }] },
  },
  {
    files: ['src/project/links.tsx', 'src/project/navigation.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['**/*.test.{ts,tsx}', 'src/test/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // asymmetric matchers (expect.any, expect.stringMatching) are typed any
      '@typescript-eslint/no-unsafe-assignment': 'off',
      'react-refresh/only-export-components': 'off',
    },
  },
  {
    files: ['scripts/**/*.mjs', 'eslint.config.js'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
);
