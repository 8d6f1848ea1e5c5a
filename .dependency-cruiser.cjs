/**
 * The layer diagram (infra/layers.cjs), checked by `npm run lint:deps` (part of `npm run lint`, so of CI), with the
 * rules that keep DuckDB behind the engine port and lib/ free of cycles.
 */
const { LAYERS } = require('./infra/layers.cjs');

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pathOf = (rooms) => `^lib/(${rooms.map((room) => (room.endsWith('.ts') ? `${escape(room)}$` : `${escape(room)}/`)).join('|')})`;

const upward = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `no-upward-from-${layer.name.replace(/[^a-z]+/g, '-')}`,
  comment: `${layer.name} sits below ${LAYERS.slice(index + 1)
    .map((above) => above.name)
    .join(', ')}: move what it needs down, or the caller up`,
  severity: 'error',
  from: { path: pathOf(layer.rooms) },
  to: { path: pathOf(LAYERS.slice(index + 1).flatMap((above) => above.rooms)) },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-folder-cycle',
      comment: 'two folders that import each other are one room, or one of them holds what belongs below both',
      severity: 'error',
      scope: 'folder',
      from: { path: '^lib/' },
      to: { circular: true },
    },
    {
      name: 'no-module-cycle',
      severity: 'error',
      from: { path: '^(lib|functions)/' },
      to: { circular: true },
    },
    {
      name: 'lib-never-imports-functions',
      comment: 'functions/ are thin Lambda shells over lib/',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^functions/' },
    },
    {
      name: 'duckdb-only-in-engine',
      comment: 'DuckDB stays behind the engine port (lib/engine/)',
      severity: 'error',
      from: { path: '^(lib|functions)/', pathNot: '^lib/engine/' },
      to: { path: '@duckdb/' },
    },
    {
      name: 'every-room-is-known',
      comment: 'a new room under lib/ takes its place in LAYERS (.dependency-cruiser.cjs) and in the README',
      severity: 'error',
      from: { path: '^lib/', pathNot: pathOf(LAYERS.flatMap((layer) => layer.rooms)) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(test|bench|infra|dist)/' },
  },
};
